// The orphan watchdog under the bookkeeping of many commands, as a server keeps it: each command
// guarded at start and forgotten when it closes, in whatever order commands end. The server here
// is a probe process that exits; the watchdog must then kill what is still guarded, promptly.
import { execFile, spawn } from 'node:child_process';
import { resolve } from 'node:path';
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
});
