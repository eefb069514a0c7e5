// LocalProcessTable with real children (pipes and PTYs): eviction and id reuse, unread output
// bounded by retention, PTY interrupts, notification order, shutdown with a pipe-holding daemon.
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ExecParams, fromUtf8, pathToFileUri, RpcError } from '@execd/protocol';
import { isProcessAlive } from '@execd/pty-utils';
import { detectContainment } from '@execd/sandboxing';
import { ProcessTracker, waitFor } from '@execd/test-kit';
import { afterEach, describe, expect, test } from 'vitest';
import { LocalProcessTable, type LocalProcessTableOptions } from '../../src/local/local-process-table.ts';
import type { ProcessNotification } from '../../src/types.ts';

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
    expect(seen.map((n) => ('seq' in n.params ? n.params.seq : undefined))).toEqual(
      seen.map((_, index) => index + 1),
    );
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

  test('shutdown ends a daemon that holds the pipe in its own session, or does not wait for it forever', async () => {
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
    // With a cgroup per command the daemon is found and killed; without one it escapes.
    const contained = (await detectContainment()).kind !== 'session' && process.getuid?.() === 0;
    expect(isProcessAlive(daemon)).toBe(!contained);
    // The long-poll saw the exit, or (streams still held open) its process gone.
    const outcome = await reading.then(
      (r) => r.exited,
      (error: unknown) => error instanceof RpcError && error.code,
    );
    expect([true, 'invalidRequest']).toContain(outcome);
  });

  test.skipIf(process.platform !== 'linux')(
    'a sandboxed child runs under bubblewrap; a denied write is reported as sandboxDenied',
    async () => {
      const table = newTable();
      const workspace = await mkdtemp(join(tmpdir(), 'execd-sandbox-'));
      try {
        const outside = join(tmpdir(), `execd-outside-${process.pid}`);
        const script = 'printf ok > "$1" && printf "inside ok\\n"; printf no > "$2"';
        const response = await table.start({
          processId: 'sandboxed',
          argv: ['sh', '-c', script, 'sh', join(workspace, 'inside'), outside],
          cwd: pathToFileUri(workspace),
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
          tty: false,
          pipeStdin: false,
          enforceManagedNetwork: false,
          sandbox: { profile: 'workspace-write', excludeSlashTmp: true, excludeTmpdirEnvVar: true },
        });
        tracker.track(table);
        expect(response).toEqual({ processId: 'sandboxed', sandboxType: 'linuxSeccomp' });
        const { text, response: last } = await readAll(table, 'sandboxed');
        expect(text).toContain('inside ok');
        expect(last.exitCode).not.toBe(0);
        expect(last.sandboxDenied).toBe(true);
        expect(table.list().processes[0]).toMatchObject({ sandboxType: 'linuxSeccomp' });
      } finally {
        await rm(workspace, { recursive: true, force: true });
        await rm(join(tmpdir(), `execd-outside-${process.pid}`), { force: true });
      }
    },
  );

  test.skipIf(process.platform !== 'linux')(
    'a sandboxed shell snapshot is captured inside the sandbox, once',
    async () => {
      const table = newTable();
      const workspace = await mkdtemp(join(tmpdir(), 'execd-sandbox-snapshot-'));
      try {
        await writeFile(
          join(workspace, '.bashrc'),
          'printf x >> "$HOME/captures"\nexport FROM_RC=restored\n',
        );
        const bash = ['/usr/bin/bash', '/bin/bash'].find((path) => existsSync(path))!;
        for (const run of [1, 2]) {
          await table.start({
            processId: `snap-${run}`,
            argv: [bash, '-lc', 'printf "%s\\n" "$FROM_RC"'],
            cwd: pathToFileUri(workspace),
            env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: workspace },
            tty: false,
            pipeStdin: false,
            enforceManagedNetwork: false,
            sandbox: { profile: 'workspace-write' },
            shellSnapshot: { scopeId: 'sandboxed', shell: { name: 'bash', path: bash } },
          });
          tracker.track(table);
          const { text, response } = await readAll(table, `snap-${run}`);
          expect({ text, exitCode: response.exitCode }).toEqual({ text: 'restored\n', exitCode: 0 });
        }
        expect(await readFile(join(workspace, 'captures'), 'utf8')).toBe('x');
      } finally {
        await rm(workspace, { recursive: true, force: true });
      }
    },
  );

  test('an unsandboxed failure is never sandboxDenied', async () => {
    const table = newTable();
    await start(table, { argv: ['sh', '-c', 'echo "Permission denied" >&2; exit 1'] });
    const { response } = await readAll(table);
    expect(response).toMatchObject({ exitCode: 1, sandboxDenied: false });
  });
});
