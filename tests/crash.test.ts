// Crash: the execd-server CLI killed with SIGKILL mid-stream. Its children must die with it (none
// orphaned), its clients must get the documented failure, and a restarted server must serve new
// sessions and kill what escaped the dead one (a daemon in its own session, still in its
// command's cgroup).
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExecServerClient } from '@execd/exec-client';
import { RpcError } from '@execd/protocol';
import { detectResourceControl } from '@execd/sandboxing';
import { cmdline, descendants, isProcessRunning, processesWithEnv, waitFor } from '@execd/test-kit';
import { afterEach, describe, expect, test } from 'vitest';
import { CliServer } from './helpers/cli-server.ts';
import { childEnv, collect, execParams } from './helpers/exec.ts';

const MARK = 'EXECD_CRASH_TEST_MARK';
const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function cliServer(): Promise<CliServer> {
  const server = await CliServer.start();
  cleanups.push(() => server.kill('SIGKILL'));
  return server;
}

async function client(url: string, codec: 'json' | 'msgpack'): Promise<ExecServerClient> {
  // A short recovery deadline: the server is gone for good, so the failure comes quickly.
  const connected = await ExecServerClient.connect({ url, codec, recoveryTimeoutMs: 1_500 });
  cleanups.push(() => connected.close());
  return connected;
}

/**
 * The sandboxed sleeper's sandbox also masks the missing protected names of /tmp (a writable
 * root), which other test files' sandboxes share: the watchdog removes them after a SIGKILL, but
 * whether they are gone depends on those files, so the test removes what is left of the ones it
 * caused, and checks the placeholders of its own workspace instead.
 */
function removeNewPlaceholders(): () => void {
  const names = ['.git', '.codex', '.agents'].map((name) => join('/tmp', name));
  const existed = new Set(names.filter((path) => existsSync(path)));
  return () => {
    for (const path of names) {
      if (existed.has(path)) continue;
      try {
        if (statSync(path).isDirectory() && readdirSync(path).length === 0) rmdirSync(path);
      } catch {
        // Not there.
      }
    }
  };
}

describe('execd-server killed with SIGKILL mid-stream', () => {
  test.each(['msgpack', 'json'] as const)(
    'no child survives, clients fail as documented, a restarted server serves (%s)',
    async (codec) => {
      const mark = randomUUID();
      const env = childEnv({ [MARK]: mark });
      const placeholders = removeNewPlaceholders();
      cleanups.push(async () => placeholders());
      const workspace = mkdtempSync(join(tmpdir(), 'execd-crash-workspace-'));
      cleanups.push(async () => rmSync(workspace, { recursive: true, force: true }));
      const masked = ['.git', '.codex', '.agents'].map((name) => join(workspace, name));
      const server = await cliServer();
      const remote = await client(server.url, codec);

      // A mix of what an agent leaves running: a plain sleeper, a shell with a background job, a PTY
      // shell that ignores SIGHUP (so closing the terminal does not kill it), a sandboxed sleeper, and
      // a process streaming output right now.
      const starts = [
        execParams({ processId: 'sleeper', argv: ['sleep', '600'], env }),
        execParams({ processId: 'tree', argv: ['sh', '-c', 'sleep 601 & sleep 602 & wait'], env }),
        execParams({ processId: 'pty', argv: ['sh', '-c', 'trap "" HUP; sleep 603'], env, tty: true }),
        execParams({
          processId: 'sandboxed',
          argv: ['sleep', '604'],
          cwd: workspace,
          env,
          sandbox: { profile: 'workspace-write', network: 'off' },
        }),
        execParams({
          processId: 'streamer',
          argv: ['sh', '-c', 'i=0; while :; do i=$((i+1)); echo "tick $i"; sleep 0.02; done'],
          env,
          pipeStdin: true,
        }),
      ];
      const processes = await Promise.all(starts.map((params) => remote.start(params)));
      const streamer = processes[4]!;
      let streamed = 0;
      const following = collect(streamer, { onOutput: (bytes) => (streamed += bytes) });

      // Every tree is up (sleeper, sh + 2 sleeps, sh + sleep, bwrap + sleep, streamer) and output flows.
      await waitFor(() => processesWithEnv(MARK, mark).length >= 9 && streamed > 200, {
        timeoutMs: 30_000,
        what: 'every child to run and the streamer to stream',
      });
      const before = descendants(server.pid).map((stat) => stat.pid);
      expect(before.length).toBeGreaterThanOrEqual(9);
      // The sandbox masks its workspace's missing protected names over empty folders it made.
      expect(masked.filter((path) => existsSync(path))).toEqual(masked);

      const exit = await server.kill('SIGKILL');
      expect(exit.signal).toBe('SIGKILL');

      // Nothing the server started survives it: no marked process, and none of its former
      // descendants (its watchdog included) is still running anywhere.
      await waitFor(() => processesWithEnv(MARK, mark).length === 0, {
        timeoutMs: 20_000,
        what: `the server's children to die (left: ${JSON.stringify(processesWithEnv(MARK, mark))})`,
      });
      await waitFor(() => before.every((pid) => !isProcessRunning(pid)), {
        timeoutMs: 30_000,
        what: 'every former descendant to be gone',
      });
      // The watchdog (a former descendant, now gone) removed them: the workspace is as it was.
      expect(readdirSync(workspace)).toEqual([]);

      // The client's documented failure (docs/protocol.md, sessions): recovery gives up, every
      // process fails with "{disconnect}; failed to resume exec-server session: {error}".
      const followed = await following;
      expect(followed.closed).toBe(false);
      expect(followed.failure).toMatch(
        /^exec-server transport disconnected: .*; failed to resume exec-server session: /,
      );
      expect(followed.stdout.toString()).toMatch(/^tick 1\n/);
      await waitFor(() => remote.state === 'failed', { timeoutMs: 30_000, what: 'the client to fail' });
      const read = await processes[0]!.read();
      expect(read).toMatchObject({ closed: true, exited: true, exitCode: null, chunks: [] });
      expect(read.failure).toBe(followed.failure);
      await expect(remote.start(execParams({ processId: 'late', argv: ['true'] }))).rejects.toMatchObject({
        code: 'transportClosed',
      });

      // A restarted server serves new sessions; the old session id means nothing to it.
      const restarted = await cliServer();
      const fresh = await client(restarted.url, codec);
      const echo = await fresh.start(execParams({ processId: 'echo', argv: ['sh', '-c', 'echo back'], env }));
      const result = await collect(echo);
      expect(result).toMatchObject({ exitCode: 0, closed: true, failure: undefined });
      expect(result.stdout.toString()).toBe('back\n');
      const resume = ExecServerClient.connect({
        url: restarted.url,
        codec,
        resumeSessionId: remote.sessionId,
      });
      await expect(resume).rejects.toSatisfy(
        (error: unknown) => RpcError.is(error) && error.code === 'invalidRequest',
      );
      expect(fresh.sessionId).not.toBe(remote.sessionId);
    },
  );
});

const control = await detectResourceControl({ sweepStale: false });
const hasCgroups = process.platform === 'linux' && process.getuid?.() === 0 && control.kind !== 'none';

describe.skipIf(!hasCgroups)('a daemon in a session of its own and a SIGKILLed server', () => {
  /** Starts a command that leaves a `setsid` daemon (no process group or session reaches it). */
  async function daemonizing(mark: string): Promise<{ server: CliServer; daemon: number }> {
    const server = await cliServer();
    const remote = await client(server.url, 'msgpack');
    const command = await remote.start(
      execParams({
        processId: 'daemonizing',
        argv: ['sh', '-c', 'setsid sleep 605 </dev/null >/dev/null 2>&1 & echo started; sleep 606'],
        env: childEnv({ [MARK]: mark }),
      }),
    );
    void collect(command);
    const daemons = () =>
      processesWithEnv(MARK, mark).filter((stat) => stat.sid === stat.pid && stat.comm === 'sleep');
    await waitFor(() => daemons().length === 1 && processesWithEnv(MARK, mark).length >= 3, {
      timeoutMs: 30_000,
      what: 'the command and its daemon',
    });
    return { server, daemon: daemons()[0]!.pid };
  }

  test('dies with the server: the watchdog kills what is in the command cgroup', async () => {
    const mark = randomUUID();
    const { server } = await daemonizing(mark);
    await server.kill('SIGKILL');
    await waitFor(() => processesWithEnv(MARK, mark).length === 0, {
      timeoutMs: 20_000,
      what: `every process of the command, the daemon included, to die (left: ${JSON.stringify(processesWithEnv(MARK, mark))})`,
    });
  });

  test('when the watchdog dies too, a server started again kills it (its cgroup is swept)', async () => {
    const mark = randomUUID();
    const { server, daemon } = await daemonizing(mark);
    // Frozen, the server cannot start a new watchdog; then both go without any cleanup.
    const watchdog = descendants(server.pid).find((stat) => /^\/bin\/sh -c trap /.test(cmdline(stat.pid)));
    expect(watchdog).toBeDefined();
    process.kill(server.pid, 'SIGSTOP');
    process.kill(watchdog!.pid, 'SIGKILL');
    await waitFor(() => !isProcessRunning(watchdog!.pid), { what: 'the watchdog to die' });
    await server.kill('SIGKILL');
    expect(isProcessRunning(daemon)).toBe(true);
    const restarted = await cliServer();
    await client(restarted.url, 'msgpack');
    await waitFor(() => processesWithEnv(MARK, mark).length === 0, {
      timeoutMs: 20_000,
      what: "the dead server's command and its daemon to be killed",
    });
  });
});

describe("a sandboxed command racing its server's death for the protected names", () => {
  // The watchdog removes the placeholders of a dead server's sandboxes; removing one detaches the
  // sandbox's mask over it. A command still running then could create `.git` (a config, hooks)
  // in its workspace. It must be dead first: the attack runs flat out until the server dies.
  // (bubblewrap's `--die-with-parent` already ends this sandbox with the server; the watchdog
  // kills before it removes, and waits, for sandboxes whose bubblewrap is not the server's child.)
  test('nothing it tried reaches the workspace, and the placeholders are gone', async () => {
    const mark = randomUUID();
    const workspace = mkdtempSync(join(tmpdir(), 'execd-crash-race-'));
    cleanups.push(async () => rmSync(workspace, { recursive: true, force: true }));
    const placeholders = removeNewPlaceholders();
    cleanups.push(async () => placeholders());
    const server = await cliServer();
    const remote = await client(server.url, 'msgpack');
    const attack = await remote.start(
      execParams({
        processId: 'racer',
        argv: [
          'sh',
          '-c',
          // (`echo`, not `:`: a failed redirection of a special built-in ends the shell.)
          'while :; do for n in .git .codex .agents; do mkdir "$n" 2>/dev/null; echo x > "$n/config" 2>/dev/null; done; done',
        ],
        cwd: workspace,
        env: childEnv({ [MARK]: mark }),
        sandbox: { profile: 'workspace-write', network: 'off' },
      }),
    );
    void collect(attack);
    // Checked from outside while it runs: the names are masked, and nothing got into them.
    const masked = ['.agents', '.codex', '.git'];
    await waitFor(() => processesWithEnv(MARK, mark).length >= 2 && readdirSync(workspace).length === 3, {
      timeoutMs: 30_000,
      what: 'the racer to run in its masked workspace',
    });
    expect(readdirSync(workspace).sort()).toEqual(masked);
    for (const name of masked) expect(readdirSync(join(workspace, name))).toEqual([]);
    const before = descendants(server.pid).map((stat) => stat.pid);

    await server.kill('SIGKILL');
    await waitFor(() => before.every((pid) => !isProcessRunning(pid)), {
      timeoutMs: 30_000,
      what: 'the racer, its sandbox and the watchdog to be gone',
    });
    // A `.git` the racer made through a removed mask would hold its config, and `rmdir` leaves
    // a folder with something in it: an empty workspace means it never got one.
    expect(readdirSync(workspace)).toEqual([]);
  });
});
