// `execd-server --prepare-sandboxes`: after a sandboxed command of a kind that repeats, the next
// sandbox of its kind is started and waits; the next such command runs in it. Checked from outside: the waiter becomes
// the command, and nothing of a waiter outlives the server, stopped or killed.
import { existsSync, mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ExecServerClient } from '@execd/exec-client';
import { cmdline, descendants, isProcessRunning, waitFor } from '@execd/test-kit';
import { afterEach, describe, expect, test } from 'vitest';
import { CliServer } from './helpers/cli-server.ts';
import { CONFINED_SANDBOX, childEnv, collect, execParams } from './helpers/exec.ts';

const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setUp(args: readonly string[]) {
  // Outside /tmp, and /tmp not writable: other test files' workspaces coming and going under a
  // writable /tmp are part of every plan, and would make a command start cold now and then.
  const workspace = realpathSync(mkdtempSync(join('/var/tmp', 'execd-prepared-')));
  cleanups.push(async () => rmSync(workspace, { recursive: true, force: true }));
  const server = await CliServer.start({ args });
  cleanups.push(() => server.kill('SIGKILL'));
  const client = await ExecServerClient.connect({ url: server.url });
  cleanups.push(() => client.close());
  const sandboxed = (processId: string, argv: string[]) =>
    client.start(
      execParams({
        processId,
        argv,
        cwd: workspace,
        env: childEnv(),
        sandbox: CONFINED_SANDBOX,
      }),
    );
  return { workspace, server, client, sandboxed };
}

/**
 * The server's waiting sandboxes: their bash waiters, children of a bubblewrap (set up by then;
 * the launcher before it and bubblewrap name the waiter in their argv too).
 */
function waiters(serverPid: number): number[] {
  const isBwrap = (pid: number) => /^\S*bwrap /.test(cmdline(pid));
  return descendants(serverPid)
    .filter((stat) => cmdline(stat.pid).includes('execd-sandbox-waiter') && !isBwrap(stat.pid))
    .filter((stat) => isBwrap(stat.ppid))
    .map((stat) => stat.pid);
}

describe('execd-server --prepare-sandboxes', () => {
  test('the next sandboxed command runs in the sandbox started after the last one', async () => {
    const { workspace, server, sandboxed } = await setUp(['--prepare-sandboxes']);
    // A kind of command is prepared for once it repeats.
    expect(await collect(await sandboxed('first', ['sh', '-c', 'echo one']))).toMatchObject({ exitCode: 0 });
    expect(waiters(server.pid)).toEqual([]);
    expect(await collect(await sandboxed('again', ['sh', '-c', 'echo two']))).toMatchObject({ exitCode: 0 });
    await waitFor(() => waiters(server.pid).length === 1, { what: 'a sandbox to wait for the next command' });
    const [waiter] = waiters(server.pid);
    const second = await sandboxed('second', ['sleep', '607']);
    // The waiter replaced itself with the command: same process, now `sleep 607`.
    await waitFor(() => cmdline(waiter!) === 'sleep 607', { what: 'the waiter to become the command' });
    await second.terminate();
    expect(await collect(second)).toMatchObject({ closed: true });
    // Confined as any sandboxed command: the home folder is read-only.
    const outside = join(homedir(), `execd-prepared-escape-${process.pid}`);
    cleanups.push(async () => rmSync(outside, { force: true }));
    const third = await collect(await sandboxed('third', ['sh', '-c', `echo "$PWD"; touch ${outside}`]));
    expect(third.stdout.toString()).toBe(`${workspace}\n`);
    expect(third.exitCode).not.toBe(0);
    expect(existsSync(outside)).toBe(false);

    // /metrics says how commands started (first, again: cold; second, third: prepared).
    const metrics = await (await fetch(`${server.httpUrl}/metrics`)).text();
    expect(metrics).toContain('execd_prepared_sandbox_commands_total{start="prepared"} 2');
    expect(metrics).toContain('execd_prepared_sandbox_commands_total{start="cold"} 2');
    expect(metrics).toContain('execd_prepared_sandboxes 1');

    // Stopped, the server ends its waiters and their placeholders go.
    await waitFor(() => waiters(server.pid).length === 1, { what: 'the next waiter' });
    const left = descendants(server.pid).map((stat) => stat.pid);
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    await waitFor(() => left.every((pid) => !isProcessRunning(pid)), { what: 'every descendant to end' });
    expect(readdirSync(workspace)).toEqual([]);
  });

  test('killed with SIGKILL, its waiter dies with it and the placeholders are removed', async () => {
    const { workspace, server, sandboxed } = await setUp(['--prepare-sandboxes']);
    await collect(await sandboxed('first', ['true']));
    await collect(await sandboxed('again', ['true']));
    await waitFor(() => waiters(server.pid).length === 1, { what: 'a waiting sandbox' });
    expect(readdirSync(workspace).sort()).toEqual(['.agents', '.codex', '.git']);
    const left = descendants(server.pid).map((stat) => stat.pid);
    await server.kill('SIGKILL');
    await waitFor(() => left.every((pid) => !isProcessRunning(pid)), {
      timeoutMs: 30_000,
      what: 'every former descendant, the waiter included, to be gone',
    });
    expect(readdirSync(workspace)).toEqual([]);
  });

  test('without the flag, no sandbox is started ahead', async () => {
    const { workspace, server, sandboxed } = await setUp([]);
    await collect(await sandboxed('first', ['true']));
    await collect(await sandboxed('second', ['true']));
    expect(waiters(server.pid)).toEqual([]);
    await waitFor(() => readdirSync(workspace).length === 0, { what: 'the placeholders to go' });
  });
});
