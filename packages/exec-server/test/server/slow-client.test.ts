// A client that reads slowly back-pressures its own session's children (as the original, spec
// §2.1) instead of losing their output: every byte arrives, in seq order. Other sessions stream
// on; terminate still kills a held-back child; a detached session's children run on unpaused.
import { createHash } from 'node:crypto';
import { pathToFileUri } from '@execd/protocol';
import { captureLogger, ProcessTracker, waitFor } from '@execd/test-kit';
import { describe, expect, test } from 'vitest';
import { LocalProcessTable } from '../../src/local/index.ts';
import { type ExecServerOptions, KEEPALIVE_MISSES_BEFORE_TERMINATE } from '../../src/server/index.ts';
import { RawWsClient } from '../helpers/raw-ws-client.ts';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';

const CWD = pathToFileUri(process.cwd());
const MIB = 1024 * 1024;
/** Generous: the machine is shared, and a stalled client has to fill several buffers first. */
const STREAM_TIMEOUT_MS = 120_000;
const tracker = new ProcessTracker();

/** Writes `argv[1]` random bytes to stdout in 64 KiB writes, then their sha256 to stderr. */
const EMIT_RANDOM = `
const crypto = require('node:crypto');
const hash = crypto.createHash('sha256');
let left = Number(process.argv[1]);
const write = () => {
  while (left > 0) {
    const piece = crypto.randomBytes(Math.min(65536, left));
    left -= piece.length;
    hash.update(piece);
    if (!process.stdout.write(piece)) return void process.stdout.once('drain', write);
  }
  process.stderr.write('sha256:' + hash.digest('hex') + '\\n');
};
write();
`;

/** A server whose sessions get real tables this test can watch (`tables[i]` = i-th session). */
async function startWatchedServer(
  options: ExecServerOptions = {},
): Promise<TestServer & { readonly watched: LocalProcessTable[] }> {
  const watched: LocalProcessTable[] = [];
  const server = await startTestServer({
    ...options,
    createProcessTable: () => {
      const table = new LocalProcessTable({ exitedRetentionMs: 60_000 });
      watched.push(table);
      return table;
    },
  });
  return Object.assign(server, { watched });
}

async function start(client: RawWsClient, processId: string, argv: string[]): Promise<void> {
  await client.call('process/start', { processId, argv, cwd: CWD, env: {}, tty: false });
  const list = await client.call<{ processes: { pid?: number }[] }>('process/list', {});
  for (const entry of list.processes) if (entry.pid !== undefined) tracker.add(entry.pid);
}

/**
 * Follows one process's pushed events on a raw client as they arrive: hashes stdout, keeps
 * stderr, records every seq. Output frames are consumed (not kept in `client.frames`), so tens
 * of MiB pass through without piling up in the test.
 */
class Follower {
  readonly #client: RawWsClient;
  readonly #processId: string;
  readonly #hash = createHash('sha256');
  readonly seqs: number[] = [];
  readonly kinds: string[] = [];
  stdoutBytes = 0;
  stderr = '';
  exitCode: number | undefined;
  closed = false;

  constructor(client: RawWsClient, processId: string) {
    this.#client = client;
    this.#processId = processId;
    // Registered after the client's own listener: the frame it just stored is the last one.
    client.socket.on('message', () => this.#take());
  }

  get sha256(): string {
    return `sha256:${this.#hash.copy().digest('hex')}`;
  }

  #take(): void {
    const frames = this.#client.frames;
    const message = frames.at(-1)?.message;
    if (message === undefined || 'id' in message) return;
    const params = message.params as Record<string, unknown> | undefined;
    if (params?.processId !== this.#processId) return;
    frames.pop();
    this.seqs.push(params.seq as number);
    this.kinds.push(String(message.method));
    if (message.method === 'process/output') {
      const raw = params.chunk as string | Uint8Array;
      const bytes = typeof raw === 'string' ? Buffer.from(raw, 'base64') : Buffer.from(raw);
      if (params.stream === 'stderr') {
        this.stderr += bytes.toString('utf8');
      } else {
        this.#hash.update(bytes);
        this.stdoutBytes += bytes.length;
      }
    } else if (message.method === 'process/exited') {
      this.exitCode = params.exitCode as number;
    } else if (message.method === 'process/closed') {
      this.closed = true;
    }
  }

  /** Every event from seq 1 without a hole, output first, then `exited`, then `closed`. */
  expectCompleteInOrder(): void {
    expect(this.seqs).toEqual(this.seqs.map((_, index) => index + 1));
    expect(this.kinds.slice(-2)).toEqual(['process/exited', 'process/closed']);
    expect(this.kinds.slice(0, -2).every((kind) => kind === 'process/output')).toBe(true);
  }
}

/** Stops reading until the server holds the session's output back, then reads again. */
async function stallUntilHeldBack(client: RawWsClient, table: LocalProcessTable): Promise<void> {
  client.pause();
  await waitFor(() => table.outputPaused, {
    what: 'the server to hold the output back',
    timeoutMs: STREAM_TIMEOUT_MS,
  });
  client.resume();
}

describe.each(['json', 'msgpack'] as const)('a slow %s client', (codec) => {
  test('receives every byte of 64 MiB, sha256-exact, with consecutive seqs', async () => {
    const total = 64 * MIB;
    await using server = await startWatchedServer();
    await using client = await RawWsClient.connect(server.url, { codec });
    await client.initialize();
    const follower = new Follower(client, 'flood');
    await start(client, 'flood', [process.execPath, '-e', EMIT_RANDOM, String(total)]);
    const table = server.watched[0]!;
    // Stalls right away and again half-way: each time far more than retention (1 MiB) is held.
    await stallUntilHeldBack(client, table);
    await waitFor(() => follower.stdoutBytes >= total / 2, {
      what: 'half of the output',
      timeoutMs: STREAM_TIMEOUT_MS,
    });
    await stallUntilHeldBack(client, table);
    await waitFor(() => follower.closed, { what: 'process/closed', timeoutMs: STREAM_TIMEOUT_MS });
    expect(follower.stdoutBytes).toBe(total);
    expect(follower.sha256).toBe(follower.stderr.trim());
    expect(follower.exitCode).toBe(0);
    follower.expectCompleteInOrder();
    expect(table.outputPaused).toBe(false);
  }, 240_000);
});

test('a held-back session does not slow another session on the same server', async () => {
  await using server = await startWatchedServer();
  await using stalled = await RawWsClient.connect(server.url);
  await stalled.initialize();
  const stalledFollower = new Follower(stalled, 'endless');
  await start(stalled, 'endless', ['cat', '/dev/zero']);
  const stalledTable = server.watched[0]!;
  stalled.pause();
  await waitFor(() => stalledTable.outputPaused, {
    what: 'the first session to be held back',
    timeoutMs: STREAM_TIMEOUT_MS,
  });

  await using reader = await RawWsClient.connect(server.url, { codec: 'msgpack' });
  await reader.initialize();
  const follower = new Follower(reader, 'stream');
  const total = 32 * MIB;
  await start(reader, 'stream', ['head', '-c', String(total), '/dev/zero']);
  await waitFor(() => follower.closed, {
    what: 'the second session to finish',
    timeoutMs: STREAM_TIMEOUT_MS,
  });
  expect(follower.stdoutBytes).toBe(total);
  follower.expectCompleteInOrder();
  expect(server.watched[1]!.outputPaused).toBe(false);

  // The first session's child was held back all along, still running.
  expect(stalledTable.outputPaused).toBe(true);
  expect(stalledTable.list().processes[0]?.state).toBe('running');
  stalled.resume();
  expect(await stalled.call('process/terminate', { processId: 'endless' })).toEqual({ running: true });
  await waitFor(() => stalledFollower.closed, {
    what: 'the killed child to close',
    timeoutMs: STREAM_TIMEOUT_MS,
  });
  stalledFollower.expectCompleteInOrder();
}, 240_000);

test('terminate kills a held-back child; its output and closed follow once the client reads', async () => {
  await using server = await startWatchedServer();
  await using client = await RawWsClient.connect(server.url);
  await client.initialize();
  const follower = new Follower(client, 'endless');
  await start(client, 'endless', ['cat', '/dev/zero']);
  const table = server.watched[0]!;
  client.pause();
  await waitFor(() => table.outputPaused, {
    what: 'the output to be held back',
    timeoutMs: STREAM_TIMEOUT_MS,
  });
  const terminate = client.request('process/terminate', { processId: 'endless' });
  // Killed and reaped while the client still reads nothing.
  await tracker.expectNoSurvivors();
  // (Whether the table still counts as held back here depends on how much the kernel's socket
  // buffers took meanwhile: the child is gone either way, so it is not asserted.)

  client.resume();
  expect((await client.response(terminate)).result).toEqual({ running: true });
  await waitFor(() => follower.closed, { what: 'process/closed', timeoutMs: STREAM_TIMEOUT_MS });
  follower.expectCompleteInOrder();
  expect(follower.exitCode).not.toBe(0);
  expect(table.list().processes[0]?.state).toBe('closed');
}, 240_000);

test('a detached session is not held back: its child runs on into retention', async () => {
  const total = 64 * MIB;
  await using server = await startWatchedServer();
  const first = await RawWsClient.connect(server.url);
  const { sessionId } = await first.initialize();
  await start(first, 'flood', ['head', '-c', String(total), '/dev/zero']);
  const table = server.watched[0]!;
  first.pause();
  await waitFor(() => table.outputPaused, {
    what: 'the output to be held back',
    timeoutMs: STREAM_TIMEOUT_MS,
  });
  await first.drop();

  await waitFor(() => !table.outputPaused, { what: 'detach to release the output' });
  await waitFor(() => table.list().processes[0]?.state === 'closed', {
    what: 'the detached child to finish',
    timeoutMs: STREAM_TIMEOUT_MS,
  });
  await using second = await RawWsClient.connect(server.url);
  await second.initialize(sessionId);
  const read = await second.call<{ closed: boolean; exitCode: number | null; firstRetainedSeq?: number }>(
    'process/read',
    { processId: 'flood', afterSeq: 0, maxBytes: 1 },
  );
  expect(read).toMatchObject({ closed: true, exitCode: 0 });
  // What the detached session could not take was evicted, and the gap is reported.
  expect(read.firstRetainedSeq).toBeGreaterThan(1);
}, 240_000);

test('a client that reads nothing for many keepalive intervals keeps its connection; its child waits', async () => {
  const { logger, records } = captureLogger();
  await using server = await startWatchedServer({ keepaliveIntervalMs: 20, logger });
  await using client = await RawWsClient.connect(server.url);
  await client.initialize();
  const follower = new Follower(client, 'flood');
  const total = 32 * MIB;
  await start(client, 'flood', ['head', '-c', String(total), '/dev/zero']);
  const table = server.watched[0]!;
  client.pause();
  await waitFor(() => table.outputPaused, {
    what: 'the output to be held back',
    timeoutMs: STREAM_TIMEOUT_MS,
  });
  // Its pings wait behind the unread backlog: unanswered, yet no reason to drop the client.
  const pings = () => records.filter((record) => record.message === 'keepalive ping').length;
  const before = pings();
  await waitFor(() => pings() >= before + 2 * KEEPALIVE_MISSES_BEFORE_TERMINATE + 2, {
    what: 'many unanswered keepalive pings',
  });
  expect(table.list().processes[0]?.state).toBe('running');
  client.resume();
  await waitFor(() => follower.closed, { what: 'process/closed', timeoutMs: STREAM_TIMEOUT_MS });
  expect(follower.stdoutBytes).toBe(total);
  follower.expectCompleteInOrder();
  expect(client.socket.readyState).toBe(client.socket.OPEN);
}, 240_000);

test('a client that stops reading with our output still in the kernel buffers keeps its connection', async () => {
  // 64 KiB leaves the server's queue at once (the sockets' buffers take it), so the server's
  // queue is empty while the client has not read it: its pings wait behind that, they are not missed.
  const { logger, records } = captureLogger();
  await using server = await startWatchedServer({ keepaliveIntervalMs: 20, logger });
  await using client = await RawWsClient.connect(server.url);
  await client.initialize();
  const follower = new Follower(client, 'small');
  client.pause();
  const id = client.request('process/start', {
    processId: 'small',
    argv: ['/bin/sh', '-c', 'head -c 65536 /dev/zero; sleep 1'],
    cwd: CWD,
    env: {},
    tty: false,
  });
  const pings = () => records.filter((record) => record.message === 'keepalive ping').length;
  await waitFor(
    () =>
      pings() >= 2 * KEEPALIVE_MISSES_BEFORE_TERMINATE + 2 &&
      server.watched[0]?.list().processes[0]?.state === 'closed',
    {
      what: 'many keepalive pings after the command closed',
      timeoutMs: STREAM_TIMEOUT_MS,
    },
  );
  expect(records.filter((record) => record.message.startsWith('peer stopped answering'))).toEqual([]);
  client.resume();
  expect(await client.response(id)).toHaveProperty('result');
  await waitFor(() => follower.closed, { what: 'process/closed', timeoutMs: STREAM_TIMEOUT_MS });
  expect(follower.stdoutBytes).toBe(65536);
  follower.expectCompleteInOrder();
  expect(client.socket.readyState).toBe(client.socket.OPEN);
});
