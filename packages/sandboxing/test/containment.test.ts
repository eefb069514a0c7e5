// Every command spawnProcess starts, sandboxed or not, is contained: ending it (terminate, close)
// ends its whole tree, `setsid` daemons, double-forked orphans and `nohup` children included,
// checked from the host in /proc; and an interrupt reaches the command's own process group
// inside the sandbox, so its trap runs and its own exit status is reported (pipes and PTYs).
import { readdirSync } from 'node:fs';
import { waitFor } from '@execd/test-kit';
import { describe, expect, test } from 'vitest';
import {
  detectContainment,
  detectResourceControl,
  type SpawnResult,
  sandboxFromContext,
  spawnProcess,
} from '../src/index.ts';
import { childEnv, sleepMarker, sleepPids, tempDir } from './helpers/index.ts';

const control = await detectResourceControl();
const hasCgroups = process.platform === 'linux' && process.getuid?.() === 0 && control.kind !== 'none';

/** The command groups execd has under its parent(s) right now. */
function commandGroups(): string[] {
  if (control.kind === 'none') return [];
  const parents = control.kind === 'cgroup2' ? [control.parent] : Object.values(control.parent);
  return parents.flatMap((parent) =>
    readdirSync(parent!, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && /^\d+\.\d+\.\d+\./.test(entry.name))
      .map((entry) => `${parent}/${entry.name}`),
  );
}

async function launch(script: string, cwd: string, sandboxed: boolean, tty = false): Promise<SpawnResult> {
  return spawnProcess({
    command: ['/bin/bash', '--norc', '-c', script],
    cwd,
    env: childEnv(),
    ...(sandboxed ? { sandbox: sandboxFromContext({ profile: 'workspace-write' }, cwd, { env: {} }) } : {}),
    tty,
    stdinOpen: !tty,
  });
}

/** Reads the output until `pattern` shows, then keeps draining in the background. */
async function outputUntil(launched: SpawnResult, pattern: RegExp): Promise<() => string> {
  let text = '';
  const iterator = launched.process.output()[Symbol.asyncIterator]();
  for (;;) {
    const next = await iterator.next();
    if (next.done) break;
    text += Buffer.from(next.value.bytes).toString();
    if (pattern.test(text)) break;
  }
  void (async () => {
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      text += Buffer.from(next.value.bytes).toString();
    }
  })();
  return () => text;
}

/** Scripts that leave a `sleep <marker>` behind the command's back. */
const ESCAPES = {
  'setsid daemon': (m: string) => `setsid sleep ${m} </dev/null >/dev/null 2>&1 &`,
  'double fork': (m: string) => `( ( sleep ${m} </dev/null >/dev/null 2>&1 & ) & )`,
  nohup: (m: string) => `nohup sleep ${m} </dev/null >/dev/null 2>&1 &`,
  'setsid daemon holding the output': (m: string) => `setsid sleep ${m} &`,
} as const;

describe.skipIf(!hasCgroups)('containment: nothing outlives its command', () => {
  test('environment info names the containment in force', async () => {
    expect(await detectContainment()).toMatchObject({ kind: control.kind });
  });

  for (const sandboxed of [false, true]) {
    for (const [name, leaveBehind] of Object.entries(ESCAPES)) {
      test(`${sandboxed ? 'sandboxed' : 'unsandboxed'}: a ${name} dies when the command closes`, async () => {
        using ws = tempDir();
        const marker = sleepMarker();
        const before = commandGroups().length;
        // The command waits for a line once it has left the sleeper behind, so the sleeper is
        // seen alive before the command ends (once it has, the group may be closed at any moment).
        const launched = await launch(`${leaveBehind(marker)}\necho started\nread -r _`, ws.path, sandboxed);
        await outputUntil(launched, /started/);
        await waitFor(() => sleepPids(marker).length === 1, { what: 'the escaped sleeper' });
        await launched.process.write('\n');
        await launched.process.exited;
        await launched.process.close();
        await waitFor(() => sleepPids(marker).length === 0, { what: 'the escaped sleeper to be gone' });
        await waitFor(() => commandGroups().length === before, { what: 'the command group to be removed' });
      });
    }

    test(`${sandboxed ? 'sandboxed' : 'unsandboxed'}: terminate ends a running tree with its daemons`, async () => {
      using ws = tempDir();
      const marker = sleepMarker();
      const launched = await launch(
        `${ESCAPES['setsid daemon'](marker)}\n${ESCAPES['double fork'](marker)}\necho started; sleep ${marker}`,
        ws.path,
        sandboxed,
      );
      await outputUntil(launched, /started/);
      await waitFor(() => sleepPids(marker).length === 3, { what: 'three sleepers' });
      expect((await launched.process.terminate({ graceMs: 0 })).exitCode).toBe(137);
      await waitFor(() => sleepPids(marker).length === 0, { what: 'every sleeper to be gone' });
      await launched.process.close();
    });
  }

  // `pnpm test:stress` runs the 1,000 cycles (a few minutes here); the suite runs 100.
  const cycles = process.env.EXECD_STRESS === '1' ? 1000 : 100;
  test(`${cycles} start/terminate cycles of daemonising trees leave no process and no group`, {
    timeout: cycles * 1000,
  }, async () => {
    using ws = tempDir();
    const marker = sleepMarker();
    const before = commandGroups().length;
    for (let i = 0; i < cycles; i++) {
      const launched = await launch(
        `${ESCAPES['setsid daemon'](marker)}\n${ESCAPES['double fork'](marker)}\nsleep ${marker}`,
        ws.path,
        i % 2 === 1,
      );
      await launched.process.terminate({ graceMs: 0 });
      await launched.process.close();
      expect(sleepPids(marker)).toEqual([]);
    }
    await waitFor(() => commandGroups().length === before, { what: 'every command group to be removed' });
  });

  test('a CPU-time limit kills a busy sandboxed command and the hit is reported', async () => {
    using ws = tempDir();
    const launched = await spawnProcess({
      command: ['/bin/bash', '--norc', '-c', 'while :; do :; done'],
      cwd: ws.path,
      env: childEnv(),
      sandbox: sandboxFromContext({ profile: 'workspace-write' }, ws.path, { env: {} }),
      tty: false,
      stdinOpen: false,
      limits: { maxCpuSeconds: 0.5 },
    });
    for await (const _ of launched.process.output()) {
      // drain
    }
    expect((await launched.process.closed).exitCode).toBe(137);
    expect(await launched.limits?.describeHit()).toMatch(/CPU-time limit \(0\.5 s\)/);
  });
});

const TRAP = "trap 'echo INT-TRAP; exit 42' INT; echo ready; while :; do sleep 0.1; done";

describe.skipIf(process.platform !== 'linux')('Ctrl-C inside the sandbox behaves as outside', () => {
  for (const sandboxed of [false, true]) {
    for (const [how, tty] of [
      ['interrupt() on pipes', false],
      ['interrupt() in a PTY', true],
      ['^C written to the PTY', true],
    ] as const) {
      test(`${sandboxed ? 'sandboxed' : 'unsandboxed'}, ${how}: the trap runs, exit 42`, async () => {
        using ws = tempDir();
        const launched = await launch(TRAP, ws.path, sandboxed, tty);
        const text = await outputUntil(launched, /ready/);
        if (how.startsWith('^C')) await launched.process.write('\u0003');
        else await launched.process.interrupt();
        expect((await launched.process.closed).exitCode).toBe(42);
        expect(text()).toContain('INT-TRAP');
        await launched.process.close();
      });
    }

    test(`${sandboxed ? 'sandboxed' : 'unsandboxed'}: without a trap the interrupt ends the command`, async () => {
      using ws = tempDir();
      const launched = await launch('echo ready; sleep 1000', ws.path, sandboxed);
      await outputUntil(launched, /ready/);
      await launched.process.interrupt();
      expect((await launched.process.closed).exitCode).toBe(130);
      await launched.process.close();
    });

    test(`${sandboxed ? 'sandboxed' : 'unsandboxed'}: ^C without a trap in a PTY reports 1, as the original`, async () => {
      using ws = tempDir();
      const launched = await launch('echo ready; sleep 1000', ws.path, sandboxed, true);
      await outputUntil(launched, /ready/);
      await launched.process.write('\u0003');
      expect((await launched.process.closed).exitCode).toBe(1);
      await launched.process.close();
    });
  }
});

// Without a cgroup (a container without cgroup delegation), an unsandboxed command's tree is
// found by the environment marker every process of it inherits.
describe.skipIf(process.platform !== 'linux')('containment without cgroups: the marker scan', () => {
  const noGroups = { kind: 'none', controllers: [], parent: undefined, reason: 'test: no cgroup' } as const;
  const launchUngrouped = (script: string, cwd: string): Promise<SpawnResult> =>
    spawnProcess({
      command: ['/bin/bash', '--norc', '-c', script],
      cwd,
      env: childEnv(),
      tty: false,
      stdinOpen: true,
      resourceControl: noGroups,
    });

  for (const [name, leaveBehind] of Object.entries(ESCAPES)) {
    test(`a ${name} dies when the command closes`, async () => {
      using ws = tempDir();
      const marker = sleepMarker();
      const launched = await launchUngrouped(`${leaveBehind(marker)}\necho started\nread -r _`, ws.path);
      await outputUntil(launched, /started/);
      await waitFor(() => sleepPids(marker).length === 1, { what: 'the escaped sleeper' });
      await launched.process.write('\n');
      await launched.process.exited;
      await launched.process.close();
      await waitFor(() => sleepPids(marker).length === 0, { what: 'the escaped sleeper to be gone' });
    });
  }

  test('terminate ends a running tree with its daemons; the command sees the marker', async () => {
    using ws = tempDir();
    const marker = sleepMarker();
    const launched = await launchUngrouped(
      `${ESCAPES['setsid daemon'](marker)}\n${ESCAPES['double fork'](marker)}\necho "started $EXECD_CONTAINMENT_ID"; sleep ${marker}`,
      ws.path,
    );
    const text = await outputUntil(launched, /started \w+/);
    expect(text()).toMatch(/started [0-9a-f]{24}/);
    await waitFor(() => sleepPids(marker).length === 3, { what: 'three sleepers' });
    expect((await launched.process.terminate({ graceMs: 0 })).exitCode).toBe(137);
    await waitFor(() => sleepPids(marker).length === 0, { what: 'every sleeper to be gone' });
    await launched.process.close();
  });

  test('a process that clears its environment escapes the scan (the documented limit)', async () => {
    using ws = tempDir();
    const marker = sleepMarker();
    const launched = await launchUngrouped(
      `setsid env -i sleep ${marker} </dev/null >/dev/null 2>&1 &\necho started\nread -r _`,
      ws.path,
    );
    await outputUntil(launched, /started/);
    await waitFor(() => sleepPids(marker).length === 1, { what: 'the sleeper' });
    await launched.process.write('\n');
    await launched.process.close();
    const [escaped] = sleepPids(marker);
    expect(escaped).toBeDefined();
    process.kill(escaped!, 'SIGKILL');
    await waitFor(() => sleepPids(marker).length === 0, { what: 'the escaped sleeper to be reaped' });
  });
});
