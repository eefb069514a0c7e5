// Every command spawnProcess starts, sandboxed or not, is contained: ending it (terminate, close)
// ends its whole tree, `setsid` daemons, double-forked orphans and `nohup` children included,
// checked from the host in /proc; and an interrupt reaches the command's own process group
// inside the sandbox, so its trap runs and its own exit status is reported (pipes and PTYs).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import {
  CGROUP_JOIN_FAILED_EXIT_CODE,
  ForkServer,
  forkServerHelperProgram,
  spawnPipe,
  spawnPty,
} from '@execd/pty-utils';
import { waitFor } from '@execd/test-kit';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
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

/**
 * Whether every command group made since `before` (a `commandGroups()`) is gone. Groups of earlier
 * tests still being removed may go meanwhile: counting them would make `before` wrong.
 */
function groupsSinceGone(before: readonly string[]): boolean {
  return commandGroups().every((group) => before.includes(group));
}

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

/**
 * Who forks the commands of a block: this process, or a fork server's helper (one whose program
 * the host lacks is left out: the server then uses the other).
 */
const SPAWNERS = (['this process', 'the python fork server', 'the perl fork server'] as const).filter(
  (spawner) =>
    spawner === 'this process' ||
    forkServerHelperProgram(spawner === 'the python fork server' ? 'python' : 'perl') !== undefined,
);
const forkServers =
  process.platform === 'linux'
    ? {
        'the python fork server': await ForkServer.start({ helpers: ['python'] }),
        'the perl fork server': await ForkServer.start({ helpers: ['perl'] }),
      }
    : undefined;
afterAll(async () => {
  for (const server of Object.values(forkServers ?? {})) await server?.close();
});
let forkServer: ForkServer | undefined;
function forkedBy(spawner: (typeof SPAWNERS)[number]): void {
  beforeAll(() => {
    forkServer = spawner === 'this process' ? undefined : forkServers?.[spawner];
    if (spawner !== 'this process' && forkServer === undefined) throw new Error(`no ${spawner} here`);
  });
}

/**
 * `launched` left a sleeper (`marker`) behind, printed `started` and waits for a line: the
 * sleeper is seen alive while it runs, and gone once the command is answered and closed.
 */
async function expectLeftBehindGoesAtClose(launched: SpawnResult, marker: string): Promise<void> {
  await outputUntil(launched, /started/);
  await waitFor(() => sleepPids(marker).length === 1, { what: 'the escaped sleeper' });
  await launched.process.write('\n');
  await launched.process.exited;
  await launched.process.close();
  await waitFor(() => sleepPids(marker).length === 0, { what: 'the escaped sleeper to be gone' });
}

async function launch(script: string, cwd: string, sandboxed: boolean, tty = false): Promise<SpawnResult> {
  return spawnProcess({
    forkServer,
    command: ['/bin/bash', '--norc', '-c', script],
    cwd,
    env: childEnv(),
    ...(sandboxed ? { sandbox: sandboxFromContext({ profile: 'workspace-write' }, cwd, { env: {} }) } : {}),
    tty,
    stdinOpen: !tty,
  });
}

/** Reads the output until `pattern` shows, then keeps draining in the background. */
async function outputUntil(
  launched: SpawnResult,
  pattern: RegExp,
): Promise<(() => string) & { readonly all: Promise<string> }> {
  let text = '';
  const iterator = launched.process.output()[Symbol.asyncIterator]();
  for (;;) {
    const next = await iterator.next();
    if (next.done) break;
    text += Buffer.from(next.value.bytes).toString();
    if (pattern.test(text)) break;
  }
  // The rest is read on in the background; `all` is every byte, once the output has ended (the
  // process's `closed` can come before this reader has taken the last chunks).
  const all = (async () => {
    for (;;) {
      const next = await iterator.next();
      if (next.done) return text;
      text += Buffer.from(next.value.bytes).toString();
    }
  })();
  return Object.assign(() => text, { all });
}

/**
 * `closed`, or (after 20 s) a failure that shows what the command printed and every process of
 * its session: a rare hang of an interrupted command in a terminal has not been reproduced alone.
 */
async function closedOrExplain(
  launched: SpawnResult,
  text: () => string,
): Promise<{ exitCode: number | null }> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const ps = execFileSync('ps', ['-eo', 'pid,ppid,pgid,sid,tty,stat,wchan:24,args'], {
        encoding: 'utf8',
      });
      const sid = ps
        .split('\n')
        .find((line) => line.trim().startsWith(`${launched.process.pid} `))
        ?.trim()
        .split(/\s+/)[3];
      const session = ps
        .split('\n')
        .filter((line, i) => i === 0 || (sid !== undefined && line.trim().split(/\s+/)[3] === sid));
      // Also add what the kernel says of the session leader, then end the command: the failure is
      // this one, not a leak the checks after the test would report as well.
      const leader = `/proc/${launched.process.pid}/status`;
      const signals = existsSync(leader)
        ? readFileSync(leader, 'utf8')
            .split('\n')
            .filter((line) => /^(State|SigPnd|ShdPnd|SigBlk|SigIgn|SigCgt):/.test(line))
            .join(' ')
        : 'gone';
      void launched.process.close();
      reject(
        new Error(
          `not closed after 20 s; output ${JSON.stringify(text())}; leader ${signals}; session:\n${session.join('\n')}`,
        ),
      );
    }, 20_000);
  });
  try {
    return await Promise.race([launched.process.closed, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Scripts that leave a `sleep <marker>` behind the command's back. */
const ESCAPES = {
  'setsid daemon': (m: string) => `setsid sleep ${m} </dev/null >/dev/null 2>&1 &`,
  'double fork': (m: string) => `( ( sleep ${m} </dev/null >/dev/null 2>&1 & ) & )`,
  nohup: (m: string) => `nohup sleep ${m} </dev/null >/dev/null 2>&1 &`,
  'setsid daemon holding the output': (m: string) => `setsid sleep ${m} &`,
} as const;

for (const spawner of SPAWNERS)
  describe.skipIf(!hasCgroups)(`containment: nothing outlives its command, forked by ${spawner}`, () => {
    forkedBy(spawner);
    test('environment info names the containment in force', async () => {
      expect(await detectContainment()).toMatchObject({ kind: control.kind });
    });

    for (const sandboxed of [false, true]) {
      for (const [name, leaveBehind] of Object.entries(ESCAPES)) {
        test(`${sandboxed ? 'sandboxed' : 'unsandboxed'}: a ${name} dies when the command closes`, async () => {
          using ws = tempDir();
          const marker = sleepMarker();
          const before = commandGroups();
          // The command waits for a line once it has left the sleeper behind, so the sleeper is
          // seen alive before the command ends (once it has, the group may be closed at any moment).
          const launched = await launch(
            `${leaveBehind(marker)}\necho started\nread -r _`,
            ws.path,
            sandboxed,
          );
          await expectLeftBehindGoesAtClose(launched, marker);
          await waitFor(() => groupsSinceGone(before), { what: 'the command group to be removed' });
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
      const before = commandGroups();
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
      await waitFor(() => groupsSinceGone(before), { what: 'every command group to be removed' });
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

/** This thread's v1 pids cgroup, as /proc/thread-self/cgroup names it. */
function threadPidsGroup(): string | undefined {
  const line = readFileSync('/proc/thread-self/cgroup', 'utf8')
    .split('\n')
    .find((entry) => entry.split(':')[1]?.split(',').includes('pids'));
  return line?.split(':')[2];
}

// On cgroup v1 an unsandboxed command is forked from inside its group (the spawning thread steps
// in for the fork and back): no wrapper exec, and the command is a member from its first
// instruction. No thread of the executor may stay inside a command's group: not the spawning
// one, and not node-pty's waiter, which a PTY fork starts while inside.
describe.skipIf(!hasCgroups || control.kind !== 'cgroup1' || control.parent.pids === undefined)(
  'cgroup v1: unsandboxed commands are born in their group',
  () => {
    const home = () => threadPidsGroup();

    for (const tty of [false, true]) {
      test(`${tty ? 'PTY' : 'pipes'}: the first instruction and an immediate daemon are in the group; the executor is not`, async () => {
        using ws = tempDir();
        const marker = sleepMarker();
        const before = home();
        const launched = await spawnProcess({
          command: [
            '/bin/bash',
            '--norc',
            '-c',
            `exec 3</proc/self/cgroup; setsid sleep ${marker} </dev/null >/dev/null 2>&1 & grep pids <&3; echo "argv0=$0"; read -r _`,
          ],
          cwd: ws.path,
          env: childEnv(),
          tty,
          stdinOpen: !tty,
        });
        expect(home()).toBe(before);
        const text = await outputUntil(launched, /argv0=/);
        const group = /pids:(\S+)/.exec(text())?.[1];
        expect(group).toMatch(/\/execd\/\d+\.\d+\.\d+\.\d+$/);
        expect(group).not.toBe(before);
        await waitFor(() => sleepPids(marker).length === 1, { what: 'the daemon' });
        const dir = commandGroups().find((path) => path.endsWith(`/${basename(group ?? '-')}`));
        const procs = readFileSync(`${dir}/cgroup.procs`, 'utf8');
        expect(procs.split('\n')).toEqual(
          expect.arrayContaining([String(launched.process.pid), String(sleepPids(marker)[0])]),
        );
        expect(procs.split('\n')).not.toContain(String(process.pid));
        await launched.process.write('\n');
        await launched.process.exited;
        await launched.process.close();
        await waitFor(() => sleepPids(marker).length === 0, { what: 'the daemon to be gone' });
        expect(home()).toBe(before);
      });
    }

    test('a spawn that fails (no such program) leaves the executor home', async () => {
      using ws = tempDir();
      const before = home();
      await expect(
        spawnProcess({
          command: [`${ws.path}/missing`],
          cwd: ws.path,
          env: childEnv(),
          tty: false,
          stdinOpen: false,
        }),
      ).rejects.toMatchObject({ code: 'spawnFailed' });
      expect(home()).toBe(before);
    });

    for (const tty of [false, true]) {
      test(`${tty ? 'PTY' : 'pipes'}: a group the thread cannot enter falls back to the wrapper, which reports exit 125`, async () => {
        using ws = tempDir();
        const before = home();
        const parent = control.kind === 'cgroup1' ? control.parent.pids! : '';
        const options = {
          argv: ['/bin/echo', 'never'],
          cwd: ws.path,
          env: childEnv(),
          joinCgroups: [`${parent}/no-such-group/cgroup.procs`],
          cgroupHome: [`${dirname(parent)}/tasks`],
        };
        const proc = tty ? await spawnPty(options) : await spawnPipe(options);
        let output = '';
        for await (const chunk of proc.output()) output += Buffer.from(chunk.bytes).toString();
        expect(await proc.closed).toEqual({ exitCode: CGROUP_JOIN_FAILED_EXIT_CODE, signal: null });
        expect(output).toMatch(/^execd: cannot join the command cgroup .*no-such-group/m);
        expect(output).not.toContain('never');
        await proc.close();
        expect(home()).toBe(before);
      });
    }
  },
);

const TRAP = "trap 'echo INT-TRAP; exit 42' INT; echo ready; while :; do sleep 0.1; done";

for (const spawner of SPAWNERS)
  describe.skipIf(process.platform !== 'linux')(
    `Ctrl-C inside the sandbox behaves as outside, forked by ${spawner}`,
    () => {
      forkedBy(spawner);
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
            expect((await closedOrExplain(launched, text)).exitCode).toBe(42);
            expect(await text.all).toContain('INT-TRAP');
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
    },
  );

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
      await expectLeftBehindGoesAtClose(launched, marker);
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
