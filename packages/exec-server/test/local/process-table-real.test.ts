// LocalProcessTable with real children (pipes and PTYs): eviction and id reuse, unread output
// bounded by retention, PTY interrupts, notification order, shutdown with a pipe-holding daemon.
import { tmpdir } from 'node:os';
import { type ExecParams, fromUtf8, pathToFileUri, RpcError } from '@execd/protocol';
import { isProcessAlive } from '@execd/pty-utils';
import { afterEach, describe, expect, test } from 'vitest';
import { LocalProcessTable, type LocalProcessTableOptions } from '../../src/local/local-process-table.ts';
import type { ProcessNotification } from '../../src/types.ts';
import { ProcessTracker } from '../helpers/process-tracker.ts';
import { waitFor } from '../helpers/wait-for.ts';

const tracker = new ProcessTracker();
const tables: LocalProcessTable[] = [];
const strays: number[] = [];

afterEach(async () => {
  await Promise.all(tables.splice(0).map((table) => table.shutdown()));
  for (const pid of strays.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
    tracker.add(pid);
  }
  await tracker.expectNoSurvivors();
});

function newTable(options: LocalProcessTableOptions = {}): LocalProcessTable {
  const table = new LocalProcessTable({ exitedRetentionMs: 60_000, ...options });
  tables.push(table);
  return table;
}

async function start(
  table: LocalProcessTable,
  params: Partial<ExecParams> & { argv: string[] },
): Promise<void> {
  await table.start({
    processId: 'proc-1',
    cwd: pathToFileUri(tmpdir()),
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    tty: false,
    pipeStdin: false,
    enforceManagedNetwork: false,
    ...params,
  });
  tracker.track(table);
}

async function readAll(table: LocalProcessTable, processId = 'proc-1') {
  let afterSeq = 0;
  let text = '';
  for (;;) {
    const response = await table.read({ processId, afterSeq, waitMs: 1000 });
    text += fromUtf8(Buffer.concat(response.chunks.map((c) => c.chunk)));
    afterSeq = response.nextSeq - 1;
    if (response.closed) return { text, response };
  }
}

describe('LocalProcessTable with real children', () => {
  test('a closed process is evicted after retention; its id is then free', async () => {
    const table = newTable({ exitedRetentionMs: 50 });
    await start(table, { argv: ['sh', '-c', 'printf one'] });
    expect((await readAll(table)).text).toBe('one');
    await waitFor(() => table.list().processes.length === 0, { what: 'eviction' });
    await expect(table.read({ processId: 'proc-1' })).rejects.toMatchObject({ code: 'invalidRequest' });
    await start(table, { argv: ['sh', '-c', 'printf two'] });
    expect((await readAll(table)).text).toBe('two');
  });

  test('output nobody reads is bounded by retention (1 MiB), and the gap is reported', async () => {
    const table = newTable();
    await start(table, { argv: ['head', '-c', '8000000', '/dev/zero'] });
    const closed = await waitFor(async () => {
      const response = await table.read({ processId: 'proc-1', afterSeq: 0, maxBytes: 1, waitMs: 500 });
      return response.closed && response;
    });
    expect(closed.exitCode).toBe(0);
    const replay = await table.read({ processId: 'proc-1' });
    const bytes = replay.chunks.reduce((sum, c) => sum + c.chunk.byteLength, 0);
    expect(bytes).toBeLessThanOrEqual(1024 * 1024);
    expect(bytes).toBeGreaterThan(1024 * 1024 - 8192);
    expect(replay.firstRetainedSeq).toBe(replay.chunks[0]!.seq);
  });

  test('interrupt reaches a tty child through its process group', async () => {
    const table = newTable();
    const script =
      'trap \'printf "signal:2\\n"; exit 7\' INT; printf "ready\\n"; while :; do sleep 0.05; done';
    await start(table, { argv: ['sh', '-c', script], tty: true });
    await waitFor(async () =>
      fromUtf8(
        Buffer.concat((await table.read({ processId: 'proc-1' })).chunks.map((c) => c.chunk)),
      ).includes('ready'),
    );
    await table.signal({ processId: 'proc-1', signal: 'interrupt' });
    const { text, response } = await readAll(table);
    expect(text).toContain('signal:2');
    expect(response.exitCode).toBe(7);
    expect(response.chunks.every((c) => c.stream === 'pty')).toBe(true);
  });

  test('notifications arrive in seq order and match what read returns', async () => {
    const table = newTable();
    const seen: ProcessNotification[] = [];
    using _subscription = table.subscribe((n) => seen.push(n));
    await start(table, {
      argv: ['sh', '-c', 'for i in 1 2 3 4 5; do printf "$i"; printf "e$i" >&2; done; exit 3'],
    });
    await readAll(table);
    expect(seen.map((n) => n.params.seq)).toEqual(seen.map((_, index) => index + 1));
    expect(seen.at(-2)).toMatchObject({
      method: 'process/exited',
      params: { exitCode: 3, sandboxDenied: false },
    });
    expect(seen.at(-1)!.method).toBe('process/closed');
    const out = seen.flatMap((n) =>
      n.method === 'process/output' && n.params.stream === 'stdout' ? [fromUtf8(n.params.chunk)] : [],
    );
    expect(out.join('')).toBe('12345');
  });

  // The daemon reports its pid from inside its new session, so it is out of reach of the kill.
  const DAEMON_SCRIPT = 'setsid sh -c \'printf "daemon %s\\n" "$$"; exec sleep 60\' & sleep 60';

  test('shutdown does not wait forever for a daemon that holds the pipe in its own session', async () => {
    const table = newTable({ shutdownDrainTimeoutMs: 200 });
    await start(table, { argv: ['sh', '-c', DAEMON_SCRIPT] });
    const line = await waitFor(async () => {
      const text = fromUtf8(
        Buffer.concat((await table.read({ processId: 'proc-1' })).chunks.map((c) => c.chunk)),
      );
      return /daemon \d+\n/.test(text) && text;
    });
    const daemon = Number(line.match(/daemon (\d+)/)![1]);
    strays.push(daemon);
    const reading = table.read({ processId: 'proc-1', afterSeq: 1, waitMs: 600_000 });
    await table.shutdown();
    expect(isProcessAlive(daemon)).toBe(true);
    // The long-poll saw the exit, or (streams still held open) its process gone.
    const outcome = await reading.then(
      (r) => r.exited,
      (error: unknown) => error instanceof RpcError && error.code,
    );
    expect([true, 'invalidRequest']).toContain(outcome);
  });

  test('a sandboxed start is refused with -32602 until sandboxing provides a launcher', async () => {
    const table = newTable();
    const error = await table
      .start({
        processId: 'sandboxed',
        argv: ['true'],
        cwd: pathToFileUri(tmpdir()),
        env: {},
        tty: false,
        pipeStdin: false,
        enforceManagedNetwork: false,
        sandbox: { profile: 'read-only' },
      })
      .catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ code: 'invalidParams' });
    expect(table.list().processes).toEqual([]);
  });
});
