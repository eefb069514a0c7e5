// LocalExecProcess.events(): replay, live follow, bounded history with recovery from retained
// output, gap errors, cancellation and close (spec §3.3), with scripted children.
import { ExecError, type ExecParams, OutputGapError, utf8 } from '@execd/protocol';
import type { ExecProcessEvent } from '@execd/protocol/contract';
import { waitFor } from '@execd/test-kit';
import { afterEach, describe, expect, test } from 'vitest';
import { LocalBackend, type LocalBackendOptions } from '../../src/local/local-backend.ts';
import { type FakeSpawnedProcess, fakeSpawner } from '../helpers/fake-spawned-process.ts';

const backends: LocalBackend[] = [];

afterEach(async () => {
  await Promise.all(backends.splice(0).map((backend) => backend.close()));
});

function setup(options: LocalBackendOptions = {}) {
  const spawner = fakeSpawner();
  const backend = new LocalBackend({ spawner, exitGraceMs: 0, ...options });
  backends.push(backend);
  const child = (index = -1): FakeSpawnedProcess => spawner.launched.at(index)!.process;
  return { backend, spawner, child };
}

const params = (processId = 'proc-1', overrides: Partial<ExecParams> = {}): ExecParams => ({
  processId,
  argv: ['true'],
  cwd: 'file:///tmp',
  env: {},
  tty: false,
  pipeStdin: false,
  enforceManagedNetwork: false,
  ...overrides,
});

async function take(iterator: AsyncIterator<ExecProcessEvent>, count: number): Promise<ExecProcessEvent[]> {
  const events: ExecProcessEvent[] = [];
  while (events.length < count) {
    const next = await iterator.next();
    if (next.done) break;
    events.push(next.value);
  }
  return events;
}

const seqs = (events: readonly ExecProcessEvent[]): number[] => events.map((e) => ('seq' in e ? e.seq : -1));

describe('events()', () => {
  test('replays what happened before the subscription, then follows live events to closed', async () => {
    const { backend, child } = setup();
    const proc = await backend.start(params());
    child().emit('stdout', 'early');
    await waitFor(async () => (await proc.read()).chunks.length === 1);
    const iterator = proc.events()[Symbol.asyncIterator]();
    expect(seqs(await take(iterator, 1))).toEqual([1]);
    const next = take(iterator, 3);
    child().emit('stderr', 'live');
    child().exit(3);
    child().endStreams();
    expect(await next).toEqual([
      { type: 'output', seq: 2, stream: 'stderr', chunk: utf8('live') },
      { type: 'exited', seq: 3, exitCode: 3, sandboxDenied: false },
      { type: 'closed', seq: 4 },
    ]);
    expect((await iterator.next()).done).toBe(true);
  });

  test('afterSeq skips what the caller has seen', async () => {
    const { backend, child } = setup();
    const proc = await backend.start(params());
    child().emit('stdout', 'a');
    child().emit('stdout', 'b');
    child().exit(0);
    child().endStreams();
    await waitFor(async () => (await proc.read()).closed);
    const events: ExecProcessEvent[] = [];
    for await (const event of proc.events({ afterSeq: 2 })) events.push(event);
    expect(seqs(events)).toEqual([3, 4]);
  });

  test('a cursor older than the history recovers from retained output', async () => {
    const { backend, child } = setup({ eventHistoryMaxEvents: 4 });
    const proc = await backend.start(params());
    for (let i = 0; i < 10; i++) child().emit('stdout', `${i}`);
    child().exit(0);
    child().endStreams();
    await waitFor(async () => (await proc.read()).closed);
    const events: ExecProcessEvent[] = [];
    for await (const event of proc.events({ afterSeq: 0 })) events.push(event);
    expect(seqs(events)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  });

  test('a cursor older than retention is an OutputGapError; no cursor replays what is left', async () => {
    const { backend, child } = setup({ eventHistoryMaxEvents: 2, retainedOutputMaxChunks: 3 });
    const proc = await backend.start(params());
    for (let i = 0; i < 6; i++) child().emit('stdout', `${i}`);
    child().exit(0);
    child().endStreams();
    await waitFor(async () => (await proc.read()).closed);
    const gap = await take(proc.events({ afterSeq: 1 })[Symbol.asyncIterator](), 1).catch((e: unknown) => e);
    expect(gap).toBeInstanceOf(OutputGapError);
    expect((gap as OutputGapError).firstRetainedSeq).toBe(4);
    expect(ExecError.is(gap) && gap.code).toBe('outputGap');
    const rest: ExecProcessEvent[] = [];
    for await (const event of proc.events()) rest.push(event);
    expect(seqs(rest)).toEqual([4, 5, 6, 7, 8]);
    // From the first retained seq on, no error.
    expect(seqs(await take(proc.events({ afterSeq: 3 })[Symbol.asyncIterator](), 5))).toEqual([
      4, 5, 6, 7, 8,
    ]);
  });

  test('a follower that falls behind retention mid-stream gets an OutputGapError', async () => {
    const { backend, child } = setup({ eventHistoryMaxEvents: 2, retainedOutputMaxChunks: 2 });
    const proc = await backend.start(params());
    child().emit('stdout', 'first');
    await waitFor(async () => (await proc.read()).chunks.length === 1);
    const iterator = proc.events()[Symbol.asyncIterator]();
    expect(seqs(await take(iterator, 1))).toEqual([1]);
    for (let i = 0; i < 5; i++) child().emit('stdout', `${i}`);
    await waitFor(async () => (await proc.read({ afterSeq: 5 })).chunks.length === 1);
    await expect(iterator.next()).rejects.toBeInstanceOf(OutputGapError);
  });

  test('history survives eviction of the table entry', async () => {
    const { backend, child } = setup({ exitedRetentionMs: 1 });
    const proc = await backend.start(params());
    child().emit('stdout', 'kept');
    child().exit(0);
    child().endStreams();
    await waitFor(() => backend.table.list().processes.length === 0);
    const events: ExecProcessEvent[] = [];
    for await (const event of proc.events()) events.push(event);
    expect(seqs(events)).toEqual([1, 2, 3]);
    await expect(proc.read()).rejects.toMatchObject({ code: 'invalidRequest' });
  });

  test('cancelSignal rejects with aborted; close() and backend close end followers quietly', async () => {
    const { backend } = setup();
    const proc = await backend.start(params('a'));
    const controller = new AbortController();
    const cancelled = take(proc.events({ cancelSignal: controller.signal })[Symbol.asyncIterator](), 1);
    controller.abort();
    await expect(cancelled).rejects.toMatchObject({ code: 'aborted' });

    const closing = take(proc.events()[Symbol.asyncIterator](), 1);
    await proc.close();
    expect(await closing).toEqual([]);
    await proc.close();

    const other = await backend.start(params('b'));
    const following = take(other.events()[Symbol.asyncIterator](), 10);
    await backend.close();
    // The killed child's exit and close arrive before the follower ends.
    expect((await following).map((e) => e.type)).toEqual(['exited', 'closed']);
  });
});

describe('handle calls', () => {
  test('writes get local-{n} ids unless one is given; interrupt, resize, terminate reach the child', async () => {
    const { backend, child } = setup();
    const proc = await backend.start(params('p', { tty: true }));
    expect(proc.sandboxType).toBe('none');
    expect(await proc.write(utf8('a'))).toEqual({ status: 'accepted' });
    expect(await proc.write(utf8('b'))).toEqual({ status: 'accepted' });
    expect(await proc.write(utf8('c'), { writeId: 'fixed' })).toEqual({ status: 'accepted' });
    expect(await proc.write(utf8('c'), { writeId: 'fixed' })).toEqual({ status: 'accepted' });
    expect(child().written.length).toBe(3);
    await proc.interrupt();
    expect(await proc.resize(120, 40)).toEqual({ resized: true });
    expect(await proc.terminate()).toEqual({ running: true });
    expect(child().signals).toEqual(['SIGINT', 'SIGKILL']);
  });

  test('environmentInfo describes this host', async () => {
    const { backend } = setup();
    const info = await backend.environmentInfo();
    expect(info.shell.path.startsWith('/')).toBe(true);
    expect(info.cwd?.startsWith('file:///')).toBe(true);
  });

  test('close is idempotent and kills what is running', async () => {
    const { backend, child } = setup();
    await backend.start(params());
    const first = backend.close();
    expect(backend.close()).toBe(first);
    await first;
    expect(child().signals).toContain('SIGKILL');
    await expect(backend.start(params('late'))).rejects.toMatchObject({ code: 'internal' });
  });
});
