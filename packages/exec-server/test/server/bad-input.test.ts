// Hostile and broken input: every method with missing, wrong-typed and oversized params, garbage
// frames, a frame a byte over the limit, deep nesting and requests before initialize. Each gets
// the right code, the bad connection stays usable, and a healthy process streaming to another
// client of the same server is not disturbed.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileUri } from '@execd/protocol';
import { ProcessTracker, waitFor } from '@execd/test-kit';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { RawWsClient } from '../helpers/raw-ws-client.ts';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';

const MAX_FRAME_BYTES = 64 * 1024;
const CWD = pathToFileUri(process.cwd());
const tracker = new ProcessTracker();

let server: TestServer;
let healthy: RawWsClient;
let stopDir: string;

const VALID_PARAMS: Record<string, Record<string, unknown>> = {
  initialize: { clientName: 'bad-input' },
  'process/start': { processId: 'x', argv: ['true'], cwd: CWD, env: {}, tty: false },
  'process/read': { processId: 'x' },
  'process/write': { processId: 'x', chunk: 'aGk=', writeId: 'w' },
  'process/signal': { processId: 'x', signal: 'interrupt' },
  'process/terminate': { processId: 'x' },
  'process/resize': { processId: 'x', cols: 80, rows: 24 },
  'process/list': {},
  'environment/info': {},
  'environment/status': {},
};
const METHOD_NAMES = Object.keys(VALID_PARAMS);
const NEEDS_PARAMS = METHOD_NAMES.filter((method) => Object.keys(VALID_PARAMS[method]!).length > 0);

/** A wrong-typed variant of each method's params. */
const WRONG_TYPED: Record<string, unknown> = {
  initialize: { clientName: 5 },
  'process/start': { processId: 'x', argv: 'true', cwd: CWD, env: {}, tty: false },
  'process/read': { processId: 'x', afterSeq: -1 },
  'process/write': { processId: 'x', chunk: 'not base64!', writeId: 'w' },
  'process/signal': { processId: 'x', signal: 'kill' },
  'process/terminate': { processId: ['x'] },
  'process/resize': { processId: 'x', cols: 0, rows: 24 },
  'process/list': { unexpected: [], nested: 'ok' } as unknown,
  'environment/info': [],
  'environment/status': 'ready',
};

beforeAll(async () => {
  server = await startTestServer({ maxFrameBytes: MAX_FRAME_BYTES, concurrentRequests: 4 });
  healthy = await RawWsClient.connect(server.url);
  await healthy.initialize();
  stopDir = await mkdtemp(join(tmpdir(), 'execd-bad-input-'));
  // Streams numbered lines until the stop file appears, then exits 0. One process, no children:
  // a shell loop forks a `sleep` every few milliseconds, which the check after each test (no
  // process started during the test may outlive it) could catch alive until it times out.
  const script = `const fs = require('node:fs'); let i = 0;
    const timer = setInterval(() => {
      if (!fs.existsSync(process.env.STOP)) return void console.log(i++);
      clearInterval(timer);
      console.log('done');
    }, 10);`;
  await healthy.call('process/start', {
    processId: 'healthy',
    argv: [process.execPath, '-e', script],
    cwd: CWD,
    env: { STOP: join(stopDir, 'stop'), PATH: process.env.PATH ?? '/usr/bin:/bin' },
    tty: false,
  });
  const list = await healthy.call<{ processes: { pid?: number }[] }>('process/list', {});
  for (const entry of list.processes) if (entry.pid !== undefined) tracker.add(entry.pid);
  await waitFor(() => healthy.notifications('process/output').length > 0, {
    what: 'the healthy process to stream',
  });
}, 60_000);

afterAll(async () => {
  await healthy?.close();
  await server?.close();
  await rm(stopDir, { recursive: true, force: true });
});

async function freshClient(options?: Parameters<typeof RawWsClient.connect>[1]): Promise<RawWsClient> {
  return RawWsClient.connect(server.url, options);
}

/** Sends one bad frame and expects exactly one id -1 / -32600 reply. */
async function expectMalformed(
  client: RawWsClient,
  data: string | Uint8Array,
  binary?: boolean,
): Promise<string> {
  const before = client.frames.filter((frame) => frame.message.id === -1).length;
  client.sendRaw(data, binary);
  const replies = await waitFor(() => {
    const found = client.frames.filter((frame) => frame.message.id === -1);
    return found.length > before && found;
  });
  const error = replies[before]!.message.error as { code: number; message: string };
  expect(error.code).toBe(-32600);
  return error.message;
}

async function expectStillUsable(client: RawWsClient): Promise<void> {
  expect(await client.call('environment/status', {})).toEqual({ status: 'ready' });
}

describe('requests before initialize', () => {
  test.each(METHOD_NAMES.filter((method) => method !== 'initialize'))(
    '%s is -32600 naming its family',
    async (method) => {
      await using client = await freshClient();
      const error = await client.errorOf(client.request(method, VALID_PARAMS[method]));
      const family = method.startsWith('process/')
        ? 'exec'
        : method === 'environment/info'
          ? 'environment info'
          : 'environment status';
      expect(error).toEqual({
        code: -32600,
        message: `client must call initialize before using ${family} methods`,
      });
    },
  );
});

describe('invalid params', () => {
  let client: RawWsClient;
  beforeAll(async () => {
    client = await freshClient();
    await client.initialize();
  });
  afterAll(async () => {
    await client.close();
  });

  test.each(NEEDS_PARAMS)('%s without params is -32602', async (method) => {
    expect((await client.errorOf(client.request(method))).code).toBe(-32602);
    expect((await client.errorOf(client.request(method, null))).code).toBe(-32602);
  });

  test.each(METHOD_NAMES)('%s with wrong-typed params is -32602', async (method) => {
    if (method === 'process/list') {
      // An object with unknown keys is a valid empty params object (unknown keys are ignored).
      expect(await client.call(method, WRONG_TYPED[method])).toEqual({ processes: [] });
      expect((await client.errorOf(client.request(method, 5))).code).toBe(-32602);
      return;
    }
    expect((await client.errorOf(client.request(method, WRONG_TYPED[method]))).code).toBe(-32602);
    expect((await client.errorOf(client.request(method, 42))).code).toBe(-32602);
  });

  test.each(METHOD_NAMES)(
    '%s with params over the frame limit is -32600 (id -1), the connection stays open',
    async (method) => {
      const params = { ...VALID_PARAMS[method], processId: 'p'.repeat(MAX_FRAME_BYTES) };
      await expectMalformed(client, JSON.stringify({ id: client.nextId(), method, params }), false);
      await expectStillUsable(client);
    },
  );

  test('large but legal params keep their normal meaning', async () => {
    const processId = 'p'.repeat(MAX_FRAME_BYTES - 1024);
    expect(await client.errorOf(client.request('process/read', { processId }))).toEqual({
      code: -32600,
      message: `unknown process id ${processId}`,
    });
    expect(await client.call('process/write', { processId, chunk: 'aGk=', writeId: 'w' })).toEqual({
      status: 'unknownProcess',
    });
    expect(await client.call('process/terminate', { processId })).toEqual({ running: false });
  });

  test('msgpack requests with bad params are answered in msgpack', async () => {
    await using msgpack = await freshClient({ codec: 'msgpack' });
    await msgpack.initialize();
    expect(
      (await msgpack.errorOf(msgpack.request('process/write', { processId: 'x', chunk: 5, writeId: 'w' })))
        .code,
    ).toBe(-32602);
    expect(msgpack.frames.every((frame) => frame.binary)).toBe(true);
  });
});

describe('garbage frames', () => {
  const TEXT_GARBAGE = [
    'not-json',
    '',
    '[]',
    '[1,2]',
    'null',
    '42',
    '"text"',
    '{}',
    '{"id":1}',
    '{"method":5}',
    '{"id":{},"method":"environment/status"}',
    '{"id":1.5,"method":"environment/status"}',
    '{"id":1,"method":"a","method":"b"}',
    '{"id":1,"method":"environment/status"',
    '\u0000',
  ];
  const BINARY_GARBAGE = [
    new Uint8Array([0xc1]),
    new Uint8Array([0x81, 0xa2, 0x69]),
    new Uint8Array([0x92, 0x01, 0x02]),
    new Uint8Array([0xd4, 0x01, 0x00]),
    new Uint8Array([0x82, 0xa1, 0x61, 0x01, 0xa1, 0x61, 0x02]),
    new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]),
    new Uint8Array([0xdf, 0xff, 0xff, 0xff, 0xff]),
  ];

  test.each(TEXT_GARBAGE)('text frame %j gets -32600 id -1', async (frame) => {
    await using client = await freshClient();
    expect(await expectMalformed(client, frame, false)).toMatch(
      /^failed to parse websocket JSON-RPC message from exec-server websocket /,
    );
    await client.initialize();
    await expectStillUsable(client);
  });

  test.each(BINARY_GARBAGE.map((bytes) => [Buffer.from(bytes).toString('hex'), bytes] as const))(
    'binary frame %s gets -32600 id -1',
    async (_hex, bytes) => {
      await using client = await freshClient();
      await expectMalformed(client, bytes, true);
      await client.initialize();
      await expectStillUsable(client);
    },
  );

  test('a frame one byte over the limit is -32600; one at the limit is served', async () => {
    await using client = await freshClient();
    await client.initialize();
    const frameOf = (size: number): string => {
      const base = JSON.stringify({ id: 9_999, method: 'environment/status', params: {}, pad: '' });
      return JSON.stringify({
        id: 9_999,
        method: 'environment/status',
        params: {},
        pad: 'x'.repeat(size - base.length),
      });
    };
    await expectMalformed(client, frameOf(MAX_FRAME_BYTES + 1), false);
    client.sendRaw(frameOf(MAX_FRAME_BYTES), false);
    expect((await client.response(9_999)).result).toEqual({ status: 'ready' });
  });

  test('deep nesting is -32600 without a stack overflow', async () => {
    await using client = await freshClient();
    await client.initialize();
    const depth = 10_000;
    const nested = `${'['.repeat(depth)}${']'.repeat(depth)}`;
    await expectMalformed(client, `{"id":1,"method":"environment/status","params":${nested}}`, false);
    await expectStillUsable(client);
  });
});

describe('the healthy neighbour', () => {
  test('kept streaming, in order and complete, while all of the above happened', async () => {
    await writeFile(join(stopDir, 'stop'), '');
    await waitFor(() => healthy.notifications('process/closed').length > 0, {
      what: 'the healthy process to close',
    });
    const events = healthy.notifications().filter((message) => String(message.method).startsWith('process/'));
    const seqs = events.map((message) => (message.params as { seq: number }).seq);
    expect(seqs).toEqual(seqs.map((_seq, index) => index + 1));
    const exited = healthy.notifications('process/exited')[0]?.params as { exitCode: number };
    expect(exited.exitCode).toBe(0);
    const text = healthy
      .notifications('process/output')
      .map((message) => Buffer.from((message.params as { chunk: string }).chunk, 'base64').toString())
      .join('');
    const lines = text.trimEnd().split('\n');
    expect(lines.at(-1)).toBe('done');
    const numbers = lines.slice(0, -1).map(Number);
    expect(numbers.length).toBeGreaterThan(1);
    expect(numbers).toEqual(numbers.map((_n, index) => index));
  });
});
