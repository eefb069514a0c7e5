// State-machine tests of LocalProcessTable with scripted children (spec §3.1, §3.2, §8.6): the
// order of seqs, retention, eviction, duplicate and cancelled starts, every error text.
import {
  createJsonCodec,
  decodeResult,
  ExecError,
  type ExecParams,
  fromUtf8,
  RpcError,
  responseMessage,
  utf8,
} from '@execd/protocol';
import { captureLogger, waitFor } from '@execd/test-kit';
import { afterEach, describe, expect, test } from 'vitest';
import { LocalProcessTable, type LocalProcessTableOptions } from '../../src/local/local-process-table.ts';
import type { ProcessNotification } from '../../src/types.ts';
import { type FakeSpawnedProcess, fakeSpawner } from '../helpers/fake-spawned-process.ts';

const tables: LocalProcessTable[] = [];

afterEach(async () => {
  await Promise.all(tables.splice(0).map((table) => table.shutdown()));
});

function setup(options: LocalProcessTableOptions = {}) {
  const spawner = fakeSpawner();
  const table = new LocalProcessTable({ spawner, exitGraceMs: 0, exitedRetentionMs: 60_000, ...options });
  tables.push(table);
  const notifications: ProcessNotification[] = [];
  table.subscribe((notification) => notifications.push(notification));
  const child = (index = -1): FakeSpawnedProcess => spawner.launched.at(index)!.process;
  return { table, spawner, notifications, child };
}

const params = (overrides: Partial<ExecParams> = {}): ExecParams => ({
  processId: 'proc-1',
  argv: ['true'],
  cwd: 'file:///tmp',
  env: {},
  tty: false,
  pipeStdin: false,
  enforceManagedNetwork: false,
  ...overrides,
});

async function rejection(promise: Promise<unknown>): Promise<RpcError> {
  const error = await promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(RpcError);
  return error as RpcError;
}

const text = (chunks: { chunk: Uint8Array }[]): string => chunks.map((c) => fromUtf8(c.chunk)).join('');

describe('seq numbering and close', () => {
  test('output, exit and close share one seq from 1, in emission order', async () => {
    const { table, notifications, child } = setup();
    expect(await table.start(params())).toEqual({ processId: 'proc-1', sandboxType: 'none' });
    child().emit('stdout', 'event output\n');
    child().emit('stderr', 'event err\n');
    child().exit(7);
    child().endStreams();
    await waitFor(() => notifications.length === 4);
    expect(notifications.map((n) => [n.method, 'seq' in n.params ? n.params.seq : undefined])).toEqual([
      ['process/output', 1],
      ['process/output', 2],
      ['process/exited', 3],
      ['process/closed', 4],
    ]);
    expect(notifications[1]!.params).toMatchObject({ processId: 'proc-1', stream: 'stderr' });
    expect(notifications[2]!.params).toEqual({
      processId: 'proc-1',
      seq: 3,
      exitCode: 7,
      sandboxDenied: false,
    });
    const read = await table.read({ processId: 'proc-1' });
    expect(read).toMatchObject({ nextSeq: 5, exited: true, exitCode: 7, closed: true, failure: null });
    expect(read.chunks.map((c) => [c.seq, c.stream])).toEqual([
      [1, 'stdout'],
      [2, 'stderr'],
    ]);
    expect(read.firstRetainedSeq).toBeUndefined();
  });

  test('exited_process_retains_late_output_past_retention: late output gets a seq after exit', async () => {
    const { table, child } = setup({ exitedRetentionMs: 1 });
    await table.start(params());
    child().exit(0);
    await waitFor(async () => (await table.read({ processId: 'proc-1' })).exited);
    expect(await table.read({ processId: 'proc-1' })).toEqual({
      chunks: [],
      nextSeq: 2,
      exited: true,
      exitCode: 0,
      closed: false,
      failure: null,
      sandboxDenied: false,
    });
    child().emit('stdout', 'late\n');
    const late = await table.read({ processId: 'proc-1', afterSeq: 1, waitMs: 10_000 });
    expect(late.chunks.map((c) => c.seq)).toEqual([2]);
    expect(late.closed).toBe(false);
    child().endStreams();
    const closed = await table.read({ processId: 'proc-1', afterSeq: 2, waitMs: 10_000 });
    expect(closed).toMatchObject({ chunks: [], nextSeq: 4, closed: true });
  });

  test('streams ending before the exit: closed waits for the exit code', async () => {
    const { table, notifications, child } = setup();
    await table.start(params());
    child().emit('stdout', 'x');
    child().endStreams();
    await waitFor(() => notifications.length === 1);
    expect((await table.list()).processes[0]!.state).toBe('running');
    child().exit(3);
    await waitFor(() => notifications.length === 3);
    expect(notifications.map((n) => n.method)).toEqual([
      'process/output',
      'process/exited',
      'process/closed',
    ]);
  });
});

describe('retention', () => {
  test('process_read_replay_is_bounded_by_chunk_count: 50,001 chunks keep seqs 2..50001', async () => {
    const { table, child } = setup();
    await table.start(params());
    for (let i = 0; i < 50_001; i++) child().emit('stdout', 'x');
    child().exit(0);
    child().endStreams();
    await waitFor(async () => (await table.read({ processId: 'proc-1', afterSeq: 50_001 })).closed);
    const read = await table.read({ processId: 'proc-1' });
    expect(read.chunks.length).toBe(50_000);
    expect(read.chunks[0]!.seq).toBe(2);
    expect(read.chunks.at(-1)!.seq).toBe(50_001);
    expect(read.firstRetainedSeq).toBe(2);
    expect(read.nextSeq).toBe(50_004);
    // The whole replay still decodes within the JSON codec's value budget.
    const codec = createJsonCodec();
    const decoded = codec.decode(codec.encode(responseMessage(1, read)));
    expect(decoded.kind === 'response' || 'result' in decoded).toBeTruthy();
    const result = decodeResult('process/read', (decoded as { result: unknown }).result);
    expect(result.chunks.length).toBe(50_000);
    // A cursor inside the retained range reports no gap.
    expect((await table.read({ processId: 'proc-1', afterSeq: 1 })).firstRetainedSeq).toBeUndefined();
  });

  test('evicts by bytes: 1 MiB per process', async () => {
    const { table, child } = setup();
    await table.start(params());
    const chunk = new Uint8Array(8192).fill(97);
    for (let i = 0; i < 200; i++) child().emit('stdout', chunk);
    await waitFor(async () => (await table.read({ processId: 'proc-1' })).chunks.at(-1)?.seq === 200);
    const read = await table.read({ processId: 'proc-1' });
    expect(read.chunks.length).toBe(128);
    expect(read.firstRetainedSeq).toBe(73);
  });

  test('closed_process_is_evicted_after_retention and the id can be reused', async () => {
    const { table, child, spawner } = setup({ exitedRetentionMs: 20 });
    await table.start(params());
    child().emit('stdout', 'first\n');
    child().exit(0);
    child().endStreams();
    await waitFor(async () => (await table.read({ processId: 'proc-1' })).closed);
    await waitFor(() => table.list().processes.length === 0);
    expect((await rejection(table.read({ processId: 'proc-1' }))).toWire()).toEqual({
      code: -32600,
      message: 'unknown process id proc-1',
    });
    expect(await table.write({ processId: 'proc-1', chunk: utf8('x'), writeId: 'w' })).toEqual({
      status: 'unknownProcess',
    });
    expect(await table.terminate({ processId: 'proc-1' })).toEqual({ running: false });
    await waitFor(() => child().closeCalls > 0);
    await table.start(params());
    expect(spawner.launched.length).toBe(2);
  });

  test('output and exit stay readable after the subscriber is gone', async () => {
    const { table, child } = setup();
    const subscription = table.subscribe(() => {
      throw new Error('a broken listener does not stop the table');
    });
    await table.start(params());
    subscription[Symbol.dispose]();
    child().emit('stdout', 'first\n');
    child().emit('stdout', 'second\n');
    child().exit(0);
    child().endStreams();
    const read = await waitFor(async () => {
      const response = await table.read({ processId: 'proc-1' });
      return response.closed && response;
    });
    expect(text(read.chunks)).toBe('first\nsecond\n');
  });
});

describe('process/start', () => {
  test('duplicate_process_ids_allow_only_one_successful_start', async () => {
    const { table } = setup();
    const results = await Promise.allSettled([table.start(params()), table.start(params())]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const failed = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect((failed.reason as RpcError).toWire()).toEqual({
      code: -32600,
      message: 'process proc-1 already exists',
    });
  });

  test('a closed but retained id is still a duplicate', async () => {
    const { table, child } = setup();
    await table.start(params());
    child().exit(0);
    child().endStreams();
    await waitFor(async () => (await table.read({ processId: 'proc-1' })).closed);
    expect((await rejection(table.start(params()))).code).toBe('invalidRequest');
  });

  test('start_process_rejects_non_native_cwd_before_launch', async () => {
    const { table, spawner } = setup();
    const error = await rejection(table.start(params({ cwd: '/tmp' })));
    expect(error.toWire()).toEqual({
      code: -32602,
      message:
        'cwd URI `/tmp` is not valid on this exec-server host: expected a file:// URI, got a native path',
    });
    expect((await rejection(table.start(params({ cwd: 'file://remote-host/tmp' })))).code).toBe(
      'invalidParams',
    );
    expect(spawner.launched).toHaveLength(0);
  });

  test('empty argv is -32602 `argv must not be empty`', async () => {
    const { table } = setup();
    expect((await rejection(table.start(params({ argv: [] })))).toWire()).toEqual({
      code: -32602,
      message: 'argv must not be empty',
    });
  });

  test('callback_enabled_start_bounds_process_id_before_proxy_launch', async () => {
    const { table } = setup();
    const withCallbacks = { networkProxy: { policyCallbacks: true } };
    for (const processId of ['', 'x'.repeat(257)]) {
      expect((await rejection(table.start(params({ processId, argv: [], ...withCallbacks })))).message).toBe(
        'callback-enabled process ID must be non-empty and at most 256 bytes',
      );
      expect((await rejection(table.start(params({ processId, argv: [] })))).message).toBe(
        'argv must not be empty',
      );
    }
    const zero = { networkProxy: { policyDecisionTimeoutMs: 0 } };
    expect((await rejection(table.start(params(zero)))).message).toBe(
      'network policy decision callback timeout must be nonzero',
    );
  });

  test('a spawn error is -32603 with its text and leaves no entry', async () => {
    const table = new LocalProcessTable({
      spawner: async () => {
        throw new Error('No such file or directory (os error 2)');
      },
    });
    tables.push(table);
    expect((await rejection(table.start(params()))).toWire()).toEqual({
      code: -32603,
      message: 'No such file or directory (os error 2)',
    });
    expect(table.list().processes).toEqual([]);
    expect((await rejection(table.read({ processId: 'proc-1' }))).message).toBe('unknown process id proc-1');
  });

  test('terminate during Starting cancels the start and kills the child', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const spawner = fakeSpawner({ onSpawn: () => gate });
    const table = new LocalProcessTable({ spawner });
    tables.push(table);
    const starting = table.start(params());
    await waitFor(() => table.list().processes.length === 1);
    expect(table.list().processes[0]).toMatchObject({ state: 'starting', processId: 'proc-1' });
    expect((await rejection(table.read({ processId: 'proc-1' }))).toWire()).toEqual({
      code: -32600,
      message: 'process id proc-1 is starting',
    });
    expect(await table.write({ processId: 'proc-1', chunk: utf8('x'), writeId: 'w' })).toEqual({
      status: 'starting',
    });
    expect(await table.signal({ processId: 'proc-1', signal: 'interrupt' })).toEqual({});
    expect(await table.terminate({ processId: 'proc-1' })).toEqual({ running: true });
    release();
    expect((await rejection(starting)).toWire()).toEqual({
      code: -32600,
      message: 'process proc-1 start was cancelled',
    });
    expect(spawner.launched[0]!.process.closeCalls).toBe(1);
    expect(table.list().processes).toEqual([]);
  });

  test('passes the computed env, native cwd and stdin mode to the spawner', async () => {
    const { table, spawner } = setup({ executorEnv: { PATH: '/bin', API_TOKEN: 't', HOME: '/h' } });
    await table.start(
      params({
        cwd: 'file:///tmp/a%20b',
        pipeStdin: true,
        arg0: 'custom',
        env: { EXTRA: '1' },
        envPolicy: {
          inherit: 'all',
          ignoreDefaultExcludes: false,
          exclude: ['HOME'],
          set: {},
          includeOnly: [],
        },
      }),
    );
    expect(spawner.launched[0]!.request).toMatchObject({
      cwd: '/tmp/a b',
      env: { PATH: '/bin', EXTRA: '1' },
      stdin: 'pipe',
      arg0: 'custom',
      tty: false,
    });
  });
});

describe('process/read', () => {
  test('long-polls until output arrives; maxBytes pages with nextSeq = last chunk + 1', async () => {
    const { table, child } = setup();
    await table.start(params());
    const waiting = table.read({ processId: 'proc-1', waitMs: 20_000 });
    child().emit('stdout', 'aaaa');
    expect(text((await waiting).chunks)).toBe('aaaa');
    child().emit('stdout', 'bb');
    child().emit('stdout', 'cc');
    await waitFor(async () => (await table.read({ processId: 'proc-1' })).nextSeq === 4);
    const first = await table.read({ processId: 'proc-1', maxBytes: 1 });
    expect(first.chunks.map((c) => c.seq)).toEqual([1]);
    expect(first.nextSeq).toBe(2);
    const page = await table.read({ processId: 'proc-1', afterSeq: 1, maxBytes: 3 });
    expect(page.chunks.map((c) => c.seq)).toEqual([2]);
    expect(page.nextSeq).toBe(3);
    const empty = await table.read({ processId: 'proc-1', afterSeq: 3, maxBytes: 3 });
    expect(empty).toMatchObject({ chunks: [], nextSeq: 4, exited: false });
  });

  test('waitMs 0 answers at once; a new exit ends a long-poll', async () => {
    const { table, child } = setup();
    await table.start(params());
    expect(await table.read({ processId: 'proc-1', waitMs: 0 })).toMatchObject({ chunks: [], nextSeq: 1 });
    const waiting = table.read({ processId: 'proc-1', waitMs: 20_000 });
    child().exit(5);
    expect(await waiting).toMatchObject({ chunks: [], exited: true, exitCode: 5, nextSeq: 2, closed: false });
    // Already seen the exit (afterSeq 1): wait for the next thing, the close.
    const closing = table.read({ processId: 'proc-1', afterSeq: 1, waitMs: 20_000 });
    child().endStreams();
    expect(await closing).toMatchObject({ closed: true, nextSeq: 3 });
  });

  test('the cancel signal abandons a long-poll', async () => {
    const { table } = setup();
    await table.start(params());
    const controller = new AbortController();
    const waiting = table.read({ processId: 'proc-1', waitMs: 600_000 }, controller.signal);
    controller.abort();
    const error = await waiting.catch((thrown: unknown) => thrown);
    expect(ExecError.is(error) && error.code).toBe('aborted');
  });
});

describe('process/write', () => {
  test('statuses, de-duplication and the empty writeId', async () => {
    const { table, child } = setup();
    await table.start(params({ pipeStdin: true }));
    expect(
      (await rejection(table.write({ processId: 'proc-1', chunk: utf8('x'), writeId: '' }))).toWire(),
    ).toEqual({
      code: -32602,
      message: 'writeId must not be empty',
    });
    const write = (chunk: string, writeId: string) =>
      table.write({ processId: 'proc-1', chunk: utf8(chunk), writeId });
    expect(await write('first\n', 'write-1')).toEqual({ status: 'accepted' });
    expect(await write('first\n', 'write-1')).toEqual({ status: 'accepted' });
    const [a, b] = await Promise.all([write('second\n', 'write-2'), write('second\n', 'write-2')]);
    expect([a, b]).toEqual([{ status: 'accepted' }, { status: 'accepted' }]);
    expect(child().written.map(fromUtf8)).toEqual(['first\n', 'second\n']);
    expect(await table.write({ processId: 'nope', chunk: utf8('x'), writeId: 'w' })).toEqual({
      status: 'unknownProcess',
    });
  });

  test('remembers 4,096 ids per process, oldest forgotten', async () => {
    const { table, child } = setup({ writeIdsPerProcess: 4096 });
    await table.start(params({ pipeStdin: true }));
    for (let i = 0; i <= 4096; i++)
      await table.write({ processId: 'proc-1', chunk: utf8('.'), writeId: `w${i}` });
    expect(child().written.length).toBe(4097);
    await table.write({ processId: 'proc-1', chunk: utf8('.'), writeId: 'w4096' });
    expect(child().written.length).toBe(4097);
    await table.write({ processId: 'proc-1', chunk: utf8('.'), writeId: 'w0' });
    expect(child().written.length).toBe(4098);
  });

  test('stdinClosed without tty or pipeStdin; a broken stdin is -32603', async () => {
    const { table, child } = setup();
    await table.start(params());
    expect(await table.write({ processId: 'proc-1', chunk: utf8('x'), writeId: 'w' })).toEqual({
      status: 'stdinClosed',
    });
    await table.start(params({ processId: 'tty', tty: true }));
    child().closeStdin();
    expect(
      (await rejection(table.write({ processId: 'tty', chunk: utf8('x'), writeId: 'w' }))).toWire(),
    ).toEqual({
      code: -32603,
      message: 'failed to write to process stdin',
    });
  });
});

describe('signal, terminate, resize, list, shutdown', () => {
  test('interrupt goes to a running child only', async () => {
    const { table, child } = setup();
    await table.start(params());
    await table.signal({ processId: 'proc-1', signal: 'interrupt' });
    expect(child().signals).toEqual(['SIGINT']);
    child().exit(130);
    await waitFor(async () => (await table.read({ processId: 'proc-1' })).exited);
    await table.signal({ processId: 'proc-1', signal: 'interrupt' });
    expect(child().signals).toEqual(['SIGINT']);
    expect(await table.signal({ processId: 'unknown', signal: 'interrupt' })).toEqual({});
  });

  test('terminate: running -> true (SIGKILL), exited -> false, unknown -> false', async () => {
    const { table, child } = setup();
    await table.start(params());
    expect(await table.terminate({ processId: 'proc-1' })).toEqual({ running: true });
    expect(child().signals).toEqual(['SIGKILL']);
    await waitFor(async () => (await table.read({ processId: 'proc-1' })).exited);
    expect(await table.terminate({ processId: 'proc-1' })).toEqual({ running: false });
    expect(await table.terminate({ processId: 'other' })).toEqual({ running: false });
  });

  test('resize only for a running tty; list reports every entry', async () => {
    const { table, child } = setup();
    await table.start(params({ processId: 'pipe' }));
    await table.start(params({ processId: 'tty', tty: true }));
    expect(await table.resize({ processId: 'pipe', cols: 100, rows: 30 })).toEqual({ resized: false });
    expect(await table.resize({ processId: 'tty', cols: 100, rows: 30 })).toEqual({ resized: true });
    expect(await table.resize({ processId: 'none', cols: 100, rows: 30 })).toEqual({ resized: false });
    const [pipe, tty] = table.list().processes;
    expect(pipe).toMatchObject({
      processId: 'pipe',
      tty: false,
      state: 'running',
      nextSeq: 1,
      sandboxType: 'none',
    });
    expect(tty).toMatchObject({
      processId: 'tty',
      tty: true,
      state: 'running',
      cwd: 'file:///tmp',
      argv: ['true'],
    });
    expect(typeof tty!.pid).toBe('number');
    child().exit(0);
    await waitFor(() => table.list().processes[1]!.state === 'exited');
    expect(table.list().processes[1]).toMatchObject({ exitCode: 0 });
    expect(table.list().processes[1]).not.toHaveProperty('pid');
  });

  test('shutdown kills every child, cancels pending starts and refuses new ones', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const spawner = fakeSpawner({ onSpawn: (request) => (request.processId === 'slow' ? gate : undefined) });
    const table = new LocalProcessTable({ spawner });
    tables.push(table);
    await table.start(params({ processId: 'a' }));
    await table.start(params({ processId: 'b' }));
    const slow = table.start(params({ processId: 'slow' }));
    const reading = table.read({ processId: 'a', waitMs: 600_000 });
    const shutdown = table.shutdown();
    release();
    await shutdown;
    expect((await rejection(slow)).message).toBe('process slow start was cancelled');
    expect((await reading).closed).toBe(true);
    for (const { process } of spawner.launched) expect(process.signals).toContain('SIGKILL');
    expect(table.list().processes).toEqual([]);
    expect((await rejection(table.start(params({ processId: 'c' })))).code).toBe('internal');
    expect(table.shutdown()).toBe(shutdown);
  });

  test('a shutdown past its drain deadline warns only about streams that are still open', async () => {
    const { logger, records } = captureLogger();
    const { table, child } = setup({ logger, shutdownDrainTimeoutMs: 50 });
    // Done: exited and output ended, but its cleanup is slow (a cgroup's removal on a busy host).
    await table.start(params({ processId: 'done' }));
    const done = child();
    done.exit(0);
    done.endStreams();
    await waitFor(() => table.list().processes.some((p) => p.processId === 'done' && p.state === 'closed'));
    let finishCleanup!: () => void;
    done.holdClose(
      new Promise<void>((resolve) => {
        finishCleanup = resolve;
      }),
    );
    // Held: a SIGKILL does not end its streams (a daemon of its own session holds them).
    await table.start(params({ processId: 'held' }));
    const held = child();
    held.kill = (signal = 'SIGKILL') => void held.signals.push(signal);
    const shutdown = table.shutdown();
    await waitFor(() =>
      records.some((record) => record.message === 'process streams still open after shutdown'),
    );
    finishCleanup();
    held.exit(137, 'SIGKILL');
    held.endStreams();
    await shutdown;
    const about = (processId: string) =>
      records
        .filter((record) => record.fields?.processId === processId && record.level !== 'debug')
        .map((r) => r.message);
    expect(about('held')).toEqual(['process streams still open after shutdown']);
    expect(about('done')).toEqual([]);
    expect(
      records.some(
        (record) =>
          record.message === 'process cleanup still running at the shutdown deadline' &&
          record.fields?.processId === 'done',
      ),
    ).toBe(true);
  });
});
