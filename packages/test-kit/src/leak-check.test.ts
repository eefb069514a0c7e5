import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { expectGone, expectNoLeaks, takeLeakBaseline } from './leak-check.ts';
import { isProcessRunning } from './process-alive.ts';
import { waitFor } from './wait-for.ts';

const FAST = { processTimeoutMs: 100, fdTimeoutMs: 100 } as const;

describe('the leak check', () => {
  test('a child that outlives the test is named with its pid and command line', async () => {
    const baseline = takeLeakBaseline();
    const child = spawn('sleep', ['1234.5'], { stdio: 'ignore' });
    try {
      await waitFor(() => child.pid !== undefined && isProcessRunning(child.pid));
      const failure = await expectNoLeaks(baseline, { scope: 'the test', ...FAST }).catch(
        (error: Error) => error,
      );
      expect(failure).toBeInstanceOf(Error);
      expect((failure as Error).message).toContain('processes outlived the test');
      expect((failure as Error).message).toContain(`${child.pid} sleep 1234.5`);
    } finally {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
    await expectNoLeaks(baseline, { scope: 'the test' });
  });

  test('children started before the baseline may live on', async () => {
    const child = spawn('sleep', ['1234.6'], { stdio: 'ignore' });
    try {
      await waitFor(() => child.pid !== undefined && isProcessRunning(child.pid));
      await expectNoLeaks(takeLeakBaseline(), { scope: 'the test', ...FAST });
    } finally {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  });

  test('expectGone follows a session leader’s session wherever its members were re-parented', async () => {
    const baseline = takeLeakBaseline();
    // The leader exits at once; its background sleep, re-parented away from this worker, stays.
    const leader = spawn('sh', ['-c', 'sleep 1234.7 >/dev/null 2>&1 & echo $!'], {
      detached: true,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const [line] = (await once(leader.stdout, 'data')) as [Buffer];
    const orphan = Number(line.toString().trim());
    await once(leader, 'close');
    try {
      await expectNoLeaks(baseline, { scope: 'the test', ...FAST });
      expectGone(leader.pid as number);
      await expect(expectNoLeaks(baseline, { scope: 'the test', ...FAST })).rejects.toThrow(
        `${orphan} sleep 1234.7`,
      );
    } finally {
      process.kill(orphan, 'SIGKILL');
      await waitFor(() => !isProcessRunning(orphan));
    }
    // Once the session is gone, the same check passes.
    await expectNoLeaks(baseline, { scope: 'the test', ...FAST });
  });

  test('an fd opened during the test and still open is named with what it points at', async () => {
    const baseline = takeLeakBaseline();
    const fd = openSync('/dev/null', 'r');
    try {
      await expect(expectNoLeaks(baseline, { scope: 'the test', ...FAST })).rejects.toThrow(
        `fd ${fd} -> /dev/null`,
      );
    } finally {
      closeSync(fd);
    }
    await expectNoLeaks(baseline, { scope: 'the test', ...FAST });
  });
});

test('a worker-lifetime helper (the orphan-guard watchdog) and the pipe to it are not leaks', async () => {
  const baseline = takeLeakBaseline();
  const watchdog = spawn('/bin/sh', ['-c', "trap '' HUP INT TERM PIPE\nread -r line"], {
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  try {
    await waitFor(() => watchdog.pid !== undefined && isProcessRunning(watchdog.pid));
    await expectNoLeaks(baseline, { scope: 'the test', ...FAST });
  } finally {
    watchdog.stdin.end('bye\n');
    await once(watchdog, 'close');
  }
});

describe('a child a beforeAll started and tracked', () => {
  let child: ChildProcess;
  beforeAll(async () => {
    child = spawn('sleep', ['1234.8'], { stdio: 'ignore' });
    await waitFor(() => child.pid !== undefined && isProcessRunning(child.pid));
    expectGone(child.pid as number);
  });
  afterAll(async () => {
    child.kill('SIGKILL');
    await once(child, 'exit');
  });

  test('may live through the first test (the check after each test looks at what the test tracked)', () => {
    expect(isProcessRunning(child.pid as number)).toBe(true);
  });

  test('and through the next one; the check after the file wants it gone', () => {
    expect(isProcessRunning(child.pid as number)).toBe(true);
  });
});
