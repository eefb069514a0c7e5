// The execd `process/outputBatch` extension: a client that asks for it in `initialize` (either
// codec) gets output that piled up within one turn as one frame per process, with every chunk's
// own seq; a client that does not ask (Codex CLI, any original client) sees exactly the original's
// one chunk per `process/output`. Either way every byte arrives, in seq order.
import { createHash } from 'node:crypto';
import { pathToFileUri } from '@execd/protocol';
import { ProcessTracker, waitFor } from '@execd/test-kit';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MAX_OUTPUT_BATCH_BYTES } from '../../src/server/outbound-batch.ts';
import { RawWsClient } from '../helpers/raw-ws-client.ts';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';

const CWD = pathToFileUri(process.cwd());
const BYTES = 4 * 1024 * 1024;
const tracker = new ProcessTracker();

/** Writes `argv[1]` random bytes to stdout as fast as the pipe takes them, then their sha256 to stderr. */
const EMIT_RANDOM = `
const crypto = require('node:crypto');
const hash = crypto.createHash('sha256');
let left = Number(process.argv[1]);
const write = () => {
  while (left > 0) {
    const piece = crypto.randomBytes(Math.min(262144, left));
    left -= piece.length;
    hash.update(piece);
    if (!process.stdout.write(piece)) return void process.stdout.once('drain', write);
  }
  process.stderr.write('sha256:' + hash.digest('hex') + '\\n');
};
write();
`;

/** Writes `argv[1]` bytes of `x` (no newline for the line discipline to expand) to a terminal. */
const EMIT_PRINTABLE = `
let left = Number(process.argv[1]);
const piece = Buffer.alloc(65536, 'x');
const write = () => {
  while (left > 0) {
    const part = piece.subarray(0, Math.min(piece.length, left));
    left -= part.length;
    if (!process.stdout.write(part)) return void process.stdout.once('drain', write);
  }
};
write();
`;
const PTY_BYTES = 2 * 1024 * 1024;

interface Chunk {
  readonly seq: number;
  readonly stream: string;
  readonly chunk: Uint8Array;
}

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
  await tracker.expectNoSurvivors();
});

/**
 * Connects, initializes (asking for batches or not), runs the emitter and collects its events;
 * `stalls`: the client stops reading for a moment that many times while the output streams.
 */
async function run(
  codec: 'json' | 'msgpack',
  askForBatches: boolean,
  tty = false,
  stalls = 0,
  bytes = BYTES,
) {
  await using client = await RawWsClient.connect(server.url, { codec });
  await client.call('initialize', {
    clientName: 'batch-test',
    ...(askForBatches ? { outputBatches: true } : {}),
  });
  client.notify('initialized', {});
  const processId = `emit-${codec}-${askForBatches}-${tty}`;
  await client.call('process/start', {
    processId,
    argv: tty
      ? [process.execPath, '-e', EMIT_PRINTABLE, String(PTY_BYTES)]
      : [process.execPath, '-e', EMIT_RANDOM, String(bytes)],
    cwd: CWD,
    env: {},
    tty,
  });
  const list = await client.call<{ processes: { pid?: number }[] }>('process/list', {});
  for (const entry of list.processes) if (entry.pid !== undefined) tracker.add(entry.pid);
  for (let i = 0; i < stalls && client.notifications('process/closed').length === 0; i++) {
    // Unread frames back up into the server's socket: what it already handed over stays there.
    client.pause();
    await new Promise((resolve) => setTimeout(resolve, 40));
    client.resume();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await waitFor(() => client.notifications('process/closed').length > 0, {
    what: 'process/closed',
    timeoutMs: 60_000,
  });
  const events: { method: string; params: Record<string, unknown> }[] = client
    .notifications()
    .map((m) => ({ method: m.method as string, params: m.params as Record<string, unknown> }));
  return { events };
}

/** The chunks of every output notification, in arrival order, and how many batch frames carried them. */
function flatten(events: { method: string; params: Record<string, unknown> }[]) {
  const chunks: Chunk[] = [];
  const order: number[] = [];
  let batches = 0;
  for (const { method, params } of events) {
    if (method === 'process/output') chunks.push(params as unknown as Chunk);
    else if (method === 'process/outputBatch') {
      batches += 1;
      const carried = params.chunks as Chunk[];
      expect(carried.length).toBeGreaterThan(1);
      expect(carried.reduce((sum, c) => sum + toBytes(c.chunk).byteLength, 0)).toBeLessThanOrEqual(
        MAX_OUTPUT_BATCH_BYTES + 8192,
      );
      chunks.push(...carried);
    }
    if (typeof params.seq === 'number') order.push(params.seq);
    else if (method === 'process/outputBatch') for (const c of params.chunks as Chunk[]) order.push(c.seq);
  }
  return { chunks, order, batches };
}

function toBytes(value: unknown): Uint8Array {
  return typeof value === 'string' ? Buffer.from(value, 'base64') : (value as Uint8Array);
}

function check(events: { method: string; params: Record<string, unknown> }[], bytes = BYTES) {
  const { chunks, order, batches } = flatten(events);
  // One seq counter for output, exit and close: 1, 2, 3, ... in arrival order, none missing.
  expect(order).toEqual(order.map((_, i) => i + 1));
  const hash = createHash('sha256');
  let stdout = 0;
  let stderr = '';
  for (const c of chunks) {
    const bytes = toBytes(c.chunk);
    expect(bytes.byteLength).toBeGreaterThan(0);
    expect(bytes.byteLength).toBeLessThanOrEqual(8192);
    if (c.stream === 'stdout') {
      hash.update(bytes);
      stdout += bytes.byteLength;
    } else stderr += Buffer.from(bytes).toString();
  }
  expect(stdout).toBe(bytes);
  expect(stderr).toContain(`sha256:${hash.digest('hex')}`);
  expect(events.at(-1)?.method).toBe('process/closed');
  return batches;
}

describe('process/outputBatch (execd extension, on request)', () => {
  test('a msgpack client that asks gets batches, and every byte in seq order', async () => {
    const { events } = await run('msgpack', true);
    expect(check(events)).toBeGreaterThan(0);
  });

  test('a msgpack client that does not ask gets one chunk per process/output', async () => {
    const { events } = await run('msgpack', false);
    expect(check(events)).toBe(0);
  });

  test('a terminal streaming flat out (one small read per turn) still travels in batches', async () => {
    // A terminal hands over at most 4 KiB per read, one read per turn of the event loop: while
    // a connection streams, its output is collected for a couple of milliseconds, so most
    // chunks share a frame instead of costing one frame each.
    const { events } = await run('msgpack', true, true);
    const { chunks, order, batches } = flatten(events);
    expect(order).toEqual(order.map((_, i) => i + 1));
    const text = chunks.map((c) => Buffer.from(toBytes(c.chunk)).toString()).join('');
    expect(text).toBe('x'.repeat(PTY_BYTES));
    const batched = events
      .filter((e) => e.method === 'process/outputBatch')
      .reduce((sum, e) => sum + (e.params.chunks as Chunk[]).length, 0);
    expect(batches).toBeGreaterThan(0);
    expect(batched / chunks.length).toBeGreaterThan(0.25);
  });

  test('a JSON client that asks gets batches too (chunks in base64), every byte in seq order', async () => {
    const { events } = await run('json', true);
    expect(check(events)).toBeGreaterThan(0);
  });

  test.each(['msgpack', 'json'] as const)(
    'a %s client that keeps stopping reading still gets every byte of every frame intact',
    async (codec) => {
      // Frames are laid out in memory the server fills again once its socket has written them:
      // whatever a slow reader leaves in the socket must never be overwritten.
      // More than the loopback socket's buffers hold, so writes do stop part way.
      const { events } = await run(codec, false, false, 24, 4 * BYTES);
      expect(check(events, 4 * BYTES)).toBe(0);
    },
  );

  test('slow clients side by side, whose slabs go from one connection to another, each get every byte', async () => {
    // A slab written by one connection's socket serves the next connection that needs one
    // (frame-slab.ts): three slow readers at once, batches and single chunks, JSON and msgpack.
    const runs = await Promise.all([
      run('json', true, false, 24, 4 * BYTES),
      run('json', false, false, 24, 4 * BYTES),
      run('msgpack', false, false, 24, 4 * BYTES),
    ]);
    expect(check(runs[0]!.events, 4 * BYTES)).toBeGreaterThan(0);
    expect(check(runs[1]!.events, 4 * BYTES)).toBe(0);
    expect(check(runs[2]!.events, 4 * BYTES)).toBe(0);
  });

  test("a JSON client that does not ask (the original's clients) gets one chunk per process/output", async () => {
    const { events } = await run('json', false);
    expect(check(events)).toBe(0);
  });
});
