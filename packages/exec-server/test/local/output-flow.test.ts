// LocalProcessTable.setOutputPaused with real children: a paused table leaves output in the
// child's pipe (the child blocks in write), still answers every method, announces an exit only
// after the output before it, and delivers everything in seq order once resumed.
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { type ExecParams, pathToFileUri } from '@execd/protocol';
import { isProcessAlive } from '@execd/pty-utils';
import { ProcessTracker, waitFor } from '@execd/test-kit';
import { afterEach, expect, test } from 'vitest';
import { LocalProcessTable } from '../../src/local/local-process-table.ts';
import { OutputFlow } from '../../src/local/output-flow.ts';
import type { ProcessNotification } from '../../src/types.ts';

const MIB = 1024 * 1024;
const tracker = new ProcessTracker();
const tables: LocalProcessTable[] = [];

afterEach(async () => {
  await Promise.all(tables.splice(0).map((table) => table.shutdown()));
});

function params(argv: string[], tty: boolean): ExecParams {
  return {
    processId: 'proc-1',
    argv,
    cwd: pathToFileUri(tmpdir()),
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    tty,
    pipeStdin: false,
    enforceManagedNetwork: false,
  };
}

/** A table whose notifications are recorded, paused before anything starts. */
async function pausedTableRunning(argv: string[], tty = false) {
  const table = new LocalProcessTable({ exitedRetentionMs: 60_000 });
  tables.push(table);
  const events: ProcessNotification[] = [];
  table.subscribe((notification) => events.push(notification));
  table.setOutputPaused(true);
  await table.start(params(argv, tty));
  tracker.track(table);
  const pid = table.list().processes[0]?.pid;
  if (pid === undefined) throw new Error('no pid');
  return { table, events, pid };
}

/**
 * The process sleeps in a system call on its stdout (first argument fd 1): a write to a full
 * pipe. `/proc/PID/syscall` reads `running` while it runs, `NR 0x1 ...` while it waits in one.
 */
function blockedWritingStdout(pid: number): boolean {
  try {
    const [call, fd] = readFileSync(`/proc/${pid}/syscall`, 'utf8').trim().split(' ');
    return call !== 'running' && fd === '0x1';
  } catch {
    return false;
  }
}

function outputBytes(events: readonly ProcessNotification[]): number {
  let bytes = 0;
  for (const event of events) if (event.method === 'process/output') bytes += event.params.chunk.byteLength;
  return bytes;
}

function expectInSeqOrder(events: readonly ProcessNotification[], exitCode: number): void {
  const sequenced = events.flatMap((event) => (event.method === 'network/policyDecision' ? [] : [event]));
  expect(sequenced.map((event) => event.params.seq)).toEqual(sequenced.map((_, index) => index + 1));
  expect(sequenced.slice(-2).map((event) => event.method)).toEqual(['process/exited', 'process/closed']);
  expect(sequenced.at(-2)?.params).toMatchObject({ exitCode });
}

test.each([
  ['pipes', false],
  ['a PTY', true],
])(
  'a paused table blocks its child (%s) in write, keeps answering, and loses nothing on resume',
  async (_, tty) => {
    const total = 8 * MIB;
    const { table, events, pid } = await pausedTableRunning(['head', '-c', String(total), '/dev/zero'], tty);
    await waitFor(() => blockedWritingStdout(pid), { what: 'the child to block in write' });
    // At most the chunk in hand when the pause took effect was taken.
    expect(events.length).toBeLessThanOrEqual(1);
    const read = await table.read({ processId: 'proc-1', afterSeq: 0, waitMs: 0 });
    expect(read).toMatchObject({ exited: false, closed: false });
    expect(read.firstRetainedSeq).toBeUndefined();
    expect(table.list().processes[0]?.state).toBe('running');

    table.setOutputPaused(false);
    await waitFor(() => events.at(-1)?.method === 'process/closed', { what: 'closed', timeoutMs: 60_000 });
    expect(outputBytes(events)).toBe(total);
    expectInSeqOrder(events, 0);
  },
);

test('an exit while paused is announced after the output before it, once resumed', async () => {
  // Less than the child's pipe plus pty-utils' buffer: the child writes it all and exits.
  const { table, events, pid } = await pausedTableRunning(['sh', '-c', 'head -c 300000 /dev/zero; exit 3']);
  await waitFor(() => !isProcessAlive(pid), { what: 'the child to exit' });
  const read = await table.read({ processId: 'proc-1', afterSeq: 0, waitMs: 0 });
  expect(read).toMatchObject({ exited: false, closed: false });

  table.setOutputPaused(false);
  await waitFor(() => events.at(-1)?.method === 'process/closed', { what: 'closed' });
  expect(outputBytes(events)).toBe(300_000);
  expectInSeqOrder(events, 3);
});

test('terminate and shutdown work on a paused table', async () => {
  const { table, events, pid } = await pausedTableRunning(['head', '-c', String(1024 ** 4), '/dev/zero']);
  await waitFor(() => blockedWritingStdout(pid), { what: 'the child to block in write' });
  expect(await table.terminate({ processId: 'proc-1' })).toEqual({ running: true });
  await waitFor(() => !isProcessAlive(pid), { what: 'the child to be killed and reaped' });
  expect(table.outputPaused).toBe(true);
  // Shutdown drains the killed child's last output for good: the table cannot be paused again.
  await table.shutdown();
  expect(table.outputPaused).toBe(false);
  table.setOutputPaused(true);
  expect(table.outputPaused).toBe(false);
  expectInSeqOrder(events, exitCodeOf(events));
});

function exitCodeOf(events: readonly ProcessNotification[]): number {
  const exited = events.find((event) => event.method === 'process/exited');
  if (exited?.method !== 'process/exited') throw new Error('no exit');
  expect(exited.params.exitCode).not.toBe(0);
  return exited.params.exitCode;
}

test('OutputFlow: waiters wake on resume or close; close ends pausing', async () => {
  const flow = new OutputFlow();
  await flow.whenFlowing();
  flow.setPaused(true);
  let woken = 0;
  const waiting = [flow.whenFlowing(), flow.whenFlowing()].map((wait) => wait.then(() => woken++));
  await Promise.resolve();
  expect(woken).toBe(0);
  flow.setPaused(false);
  await Promise.all(waiting);
  expect(woken).toBe(2);
  flow.setPaused(true);
  const last = flow.whenFlowing();
  flow.close();
  await last;
  flow.setPaused(true);
  expect(flow.paused).toBe(false);
});
