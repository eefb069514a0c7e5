// The orphan watchdog under the bookkeeping of many commands, as a server keeps it: each command
// guarded at start and forgotten when it closes, in whatever order commands end. The server here
// is a probe process that exits; the watchdog must then kill what is still guarded, promptly.
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import {
  type BuiltCli,
  buildCliFromSource,
  isProcessRunning,
  ProcessTracker,
  waitFor,
} from '@execd/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const tracker = new ProcessTracker();
let probe: BuiltCli;

beforeAll(async () => {
  probe = await buildCliFromSource({
    packageDir: resolve(import.meta.dirname, '../..'),
    entry: 'test/helpers/orphan-guard-probe.ts',
    name: 'orphan-guard-probe',
  });
}, 60_000);

afterAll(async () => {
  await probe?.remove();
});

describe.skipIf(process.platform !== 'linux')('the orphan watchdog', () => {
  it('still kills what is guarded when its server dies after 3,000 commands came and went', async () => {
    // A child in a process group of its own, as a server's command.
    const child = spawn('sleep', ['300'], { detached: true, stdio: 'ignore' });
    tracker.add(child.pid!);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const { stdout } = await run(process.execPath, [probe.script, String(child.pid), '3000'], {
      timeout: 60_000,
    });
    const watchdog = Number(stdout.trim());
    expect(watchdog).toBeGreaterThan(1);
    tracker.add(watchdog);
    // Keeping the guards in one string made forgetting 3,000 of them in shuffled order a
    // pattern match over the whole string each: minutes of the watchdog's CPU before it got here.
    await waitFor(() => !isProcessRunning(child.pid!), {
      what: 'the guarded group to die',
      timeoutMs: 30_000,
    });
    expect(await exited).toBeNull(); // killed: no exit code
    await waitFor(() => !isProcessRunning(watchdog), { what: 'the watchdog to exit', timeoutMs: 30_000 });
  }, 90_000);

  it('removes the placeholders of the sandboxes that were running, and nothing else', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'execd-watchdog-placeholders-'));
    try {
      const folder = (name: string) => {
        const path = join(dir, name);
        mkdirSync(path);
        return path;
      };
      const running = folder('running');
      // A name a hostile workspace could have: the watchdog must not evaluate it.
      // (The watchdog runs in `dir`: whatever it would run there leaves a file.)
      // (`$` + `{IFS}`: a space would keep the path from being guarded at all.)
      const ifs = '$' + '{IFS}';
      const hostile = folder(`q'"$(touch${ifs}pwned)\`touch${ifs}pwned2\`;x`);
      const filled = folder('filled'); // something was put in: it stays
      writeFileSync(join(filled, 'HEAD'), 'ref: refs/heads/main\n');
      const ended = folder('ended'); // its sandbox ended before the server died: not the watchdog's
      const spaced = folder('with space'); // not guarded: the watchdog reads lines
      const child = spawn('sleep', ['300'], { detached: true, stdio: 'ignore' });
      tracker.add(child.pid!);
      const args = [running, hostile, filled, spaced].map((path) => `guard:${path}`);
      const { stdout } = await run(
        process.execPath,
        [probe.script, String(child.pid), '3', ...args, `forget:${ended}`],
        { timeout: 60_000, cwd: dir },
      );
      const watchdog = Number(stdout.trim());
      tracker.add(watchdog);
      await waitFor(() => !isProcessRunning(watchdog), { what: 'the watchdog to exit', timeoutMs: 30_000 });
      expect(isProcessRunning(child.pid!)).toBe(false);
      expect(existsSync(running)).toBe(false);
      expect(existsSync(hostile)).toBe(false);
      expect(existsSync(join(dir, 'pwned'))).toBe(false);
      expect(existsSync(join(dir, 'pwned2'))).toBe(false);
      expect(existsSync(join(filled, 'HEAD'))).toBe(true);
      expect(existsSync(ended)).toBe(true);
      expect(existsSync(spaced)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
