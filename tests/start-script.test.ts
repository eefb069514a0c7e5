// `npm start` (scripts/start.mjs) stopped by pid: the signal reaches execd-server, and the script
// exits once the server has, so no server is left running on its own. Runs the built tree as it is
// (`--no-bootstrap`: no install or build in a shared checkout).
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CliChild, isProcessRunning, waitFor } from '@execd/test-kit';
import { describe, expect, onTestFinished, test } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const START = join(ROOT, 'scripts', 'start.mjs');
const BUILT = existsSync(join(ROOT, 'packages', 'exec-server', 'dist', 'cli', 'execd-server.js'));

/** Pids whose parent is `parent` (from /proc). */
function childrenOf(parent: number): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) === parent) pids.push(Number(name));
    } catch {
      // Gone while we looked.
    }
  }
  return pids;
}

describe.skipIf(process.platform !== 'linux' || !BUILT)('scripts/start.mjs', () => {
  test.each(['SIGTERM', 'SIGINT', 'SIGHUP'] as const)(
    '%s to the script stops the server, and the script exits after it',
    async (signal) => {
      const env = { ...process.env };
      delete env.EXECD_AUTH_TOKEN;
      await using start = new CliChild(
        START,
        ['--no-bootstrap', '--listen', 'ws://127.0.0.1:0', '--log-level', 'off'],
        { env },
      );
      const url = await start.firstLine({ what: 'the server URL' });
      expect(url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
      const [server] = await waitFor(
        () => {
          const found = childrenOf(start.pid);
          return found.length > 0 ? found : undefined;
        },
        { what: 'the server process' },
      );
      expect(server).toBeDefined();
      start.child.kill(signal);
      expect(await start.exited).toEqual({ code: 0, signal: null });
      await waitFor(() => !isProcessRunning(server as number), { what: 'the server to be gone' });
      expect(start.stderr).toContain('execd-server is listening on');
    },
  );

  test('the script whose parent dies (npm stopped by pid) stops the server', async () => {
    const env = { ...process.env };
    delete env.EXECD_AUTH_TOKEN;
    // A parent in the role of npm: it starts the script and is SIGKILLed (npm does not pass a
    // SIGTERM on to its script either).
    const dir = mkdtempSync(join(tmpdir(), 'execd-start-parent-'));
    const npmLike = join(dir, 'npm-like.mjs');
    writeFileSync(
      npmLike,
      `import { spawn } from 'node:child_process';
spawn(process.execPath, ${JSON.stringify([START, '--no-bootstrap', '--listen', 'ws://127.0.0.1:0', '--log-level', 'off'])}, { stdio: 'inherit' });
setInterval(() => {}, 1000);
`,
    );
    await using parent = new CliChild(npmLike, [], { env });
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const url = await parent.firstLine({ what: 'the server URL' });
    expect(url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
    const [script] = await waitFor(
      () => {
        const found = childrenOf(parent.pid);
        return found.length > 0 ? found : undefined;
      },
      { what: 'the start script' },
    );
    const [server] = await waitFor(
      () => {
        const found = childrenOf(script as number);
        return found.length > 0 ? found : undefined;
      },
      { what: 'the server process' },
    );
    parent.child.kill('SIGKILL');
    await waitFor(() => !isProcessRunning(server as number), { what: 'the server to be gone' });
    await waitFor(() => !isProcessRunning(script as number), { what: 'the script to be gone' });
  });
});
