// Per-command resource limits against real cgroups, real bubblewrap and real attacks: a fork
// bomb, a memory hog, a busy loop, a daemon escaping its session, a huge file, and a command
// trying to leave its cgroup. Every check is made from the host, outside the sandbox.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { waitFor } from '@execd/test-kit';
import { afterEach, describe, expect, test } from 'vitest';
import { commandGroupName, groupOwner } from '../src/limits/group-name.ts';
import {
  type CommandCgroup,
  type CommandLimits,
  createCommandCgroup,
  DEFAULT_COMMAND_LIMITS,
  detectResourceControl,
  LAUNCHER_LIMITS_FAILED_EXIT_CODE,
  launcherLimitLines,
  type ResourceControl,
  sweepStaleCommandGroups,
} from '../src/limits/index.ts';
import { parentDirectories } from '../src/limits/sweep.ts';
import { type ProcEntry, procEntries } from './helpers/index.ts';

const BWRAP = '/usr/bin/bwrap';
const MIB = 1024 * 1024;

const isRoot = process.getuid?.() === 0;
const control: ResourceControl = isRoot
  ? await detectResourceControl()
  : { kind: 'none', controllers: [], parent: undefined, reason: 'not root' };
const v2: ResourceControl = isRoot
  ? await detectResourceControl({ kinds: ['cgroup2'] })
  : { kind: 'none', controllers: [], parent: undefined, reason: 'not root' };
const usable = control.controllers.includes('pids') && control.controllers.includes('memory');
/** This host mounts the v1 pids hierarchy (read independently of the code under test). */
const v1Host = readFileSync('/proc/self/mountinfo', 'utf8')
  .split('\n')
  .some((line) => / - cgroup cgroup .*\bpids\b/.test(line));

/** Live host processes running exactly `sleep <marker>`. */
function sleepers(marker: string): ProcEntry[] {
  return procEntries().filter((entry) => entry.cmdline === `sleep ${marker}`);
}

/** A `sleep` duration nothing else on the host runs: it marks the test's processes. */
function marker(): string {
  return `${300 + Math.floor(Math.random() * 100)}.${String(Math.random()).slice(2, 11)}`;
}

function members(group: CommandCgroup): number[] {
  const pids = new Set<number>();
  for (const file of group.procsFiles) {
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, 'utf8').split('\n')) if (line) pids.add(Number(line));
  }
  return [...pids];
}

interface Launched {
  readonly child: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly output: { stdout: string; stderr: string };
}

const children = new Set<Launched>();
const groups = new Set<CommandCgroup>();
const markers = new Set<string>();

/** The launcher as execd runs it: the limit lines, then `exec` of the command (bwrap or not). */
function launch(lines: readonly string[], argv: readonly string[]): Launched {
  const script = [...lines, 'exec "$@"'].join('\n');
  const child = spawn('/bin/bash', ['-c', script, 'launcher', ...argv], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' },
  });
  const output = { stdout: '', stderr: '' };
  child.stdout!.setEncoding('utf8').on('data', (text: string) => {
    output.stdout += text;
  });
  child.stderr!.setEncoding('utf8').on('data', (text: string) => {
    output.stderr += text;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const launched = { child, exited, output };
  children.add(launched);
  return launched;
}

/** `bash -c script` in a bubblewrap sandbox shaped like execd's (user/pid/net namespaces, no capabilities, read-only host). */
function sandboxed(script: string, writable: readonly string[] = []): string[] {
  return [
    BWRAP,
    '--unshare-user',
    '--unshare-pid',
    '--unshare-net',
    '--unshare-ipc',
    '--unshare-uts',
    '--die-with-parent',
    '--new-session',
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    '--tmpfs',
    '/tmp',
    '--ro-bind',
    '/sys',
    '/sys',
    ...writable.flatMap((dir) => ['--bind', dir, dir]),
    '--cap-drop',
    'ALL',
    '--disable-userns',
    '--',
    '/bin/bash',
    '-c',
    script,
  ];
}

async function group(limits: CommandLimits, on: ResourceControl = control): Promise<CommandCgroup> {
  const created = await createCommandCgroup(on, limits, { cpuPollIntervalMs: 50 });
  groups.add(created);
  return created;
}

function newMarker(): string {
  const value = marker();
  markers.add(value);
  return value;
}

afterEach(async () => {
  for (const created of groups) await created.close();
  groups.clear();
  for (const { child, exited } of children) {
    child.kill('SIGKILL');
    await exited;
  }
  children.clear();
  for (const value of markers) {
    const left = sleepers(value);
    for (const entry of left) process.kill(entry.pid, 'SIGKILL');
    expect(left.map((e) => e.pid)).toEqual([]);
  }
  markers.clear();
});

describe.skipIf(!usable)('per-command cgroups', () => {
  test('detection finds pids and memory, prepares the parents, and is done once', async () => {
    expect(control.kind).not.toBe('none');
    expect(control.controllers).toEqual(expect.arrayContaining(['pids', 'memory']));
    for (const dir of parentDirectories(control)) expect(statSync(dir).isDirectory()).toBe(true);
    expect(detectResourceControl()).toBe(detectResourceControl());
  });

  test.runIf(v1Host)('on this cgroup v1 host, detection reports cgroup1 with pids, memory and cpu', () => {
    expect(control.kind).toBe('cgroup1');
    expect(control.controllers).toEqual(['pids', 'memory', 'cpu']);
    expect(control.reason).toBeUndefined();
  });

  test('a fork bomb inside the sandbox stops at maxProcesses, and close() kills every process', async () => {
    const sleep = newMarker();
    const cgroup = await group({ maxProcesses: 50 });
    expect(cgroup.limits.maxProcesses).toBe(50);
    launch(
      launcherLimitLines({ procsFiles: cgroup.procsFiles }),
      sandboxed(`for i in $(seq 200); do sleep ${sleep} & done; wait`),
    );
    await waitFor(async () => (await cgroup.readEvents()).pidsLimitHit, {
      what: 'a fork refused by the pids limit',
    });
    const pidsDir = cgroup.paths.find((dir) => existsSync(posix.join(dir, 'pids.current')))!;
    expect(Number(readFileSync(posix.join(pidsDir, 'pids.current'), 'utf8'))).toBeLessThanOrEqual(50);
    const running = sleepers(sleep).length;
    expect(running).toBeGreaterThan(0);
    expect(running).toBeLessThan(50);
    await cgroup.close();
    expect(sleepers(sleep)).toEqual([]);
    expect(members(cgroup)).toEqual([]);
    expect((await cgroup.readEvents()).pidsLimitHit).toBe(true);
  });

  test('a sandboxed command allocating past maxMemoryBytes is OOM-killed, and the group says so', async () => {
    const cgroup = await group({ maxMemoryBytes: 64 * MIB });
    const allocate =
      'const chunks = []; for (let i = 0; i < 64; i++) chunks.push(Buffer.alloc(4 << 20, 1)); console.log("allocated")';
    const { exited, output } = launch(
      launcherLimitLines({ procsFiles: cgroup.procsFiles }),
      sandboxed(`node -e '${allocate}'`),
    );
    const { code } = await exited;
    expect(code).not.toBe(0);
    expect(output.stdout).not.toContain('allocated');
    const events = await cgroup.readEvents();
    expect(events.oomKills).toBeGreaterThan(0);
    expect(events.memoryLimitHit).toBe(true);
    expect(events.pidsLimitHit).toBe(false);
    expect(events.cpuLimitHit).toBeUndefined();
  });

  test('a busy loop is killed once it has used maxCpuSeconds', async () => {
    const cgroup = await group({ maxCpuSeconds: 1 });
    const { exited } = launch(
      launcherLimitLines({ procsFiles: cgroup.procsFiles }),
      sandboxed('while :; do :; done'),
    );
    const { code, signal } = await exited;
    expect(code === 137 || signal === 'SIGKILL').toBe(true);
    expect((await cgroup.readEvents()).cpuLimitHit).toBe(true);
    expect(await cgroup.readCpuSeconds()).toBeGreaterThanOrEqual(1);
    // bubblewrap outside may die a moment before the loop it sandboxes: the kill is one round.
    await waitFor(() => members(cgroup).length === 0, { what: 'every process of the group to die' });
  });

  test('without a CPU limit a command is not killed for its CPU time', async () => {
    const cgroup = await group({ maxProcesses: 50 });
    const { exited } = launch(launcherLimitLines({ procsFiles: cgroup.procsFiles }), [
      '/bin/bash',
      '-c',
      'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done',
    ]);
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(await cgroup.readEvents()).toEqual({ memoryLimitHit: false, oomKills: 0, pidsLimitHit: false });
  });

  test('killAll reaches a setsid daemon that left the command and its session', async () => {
    const sleep = newMarker();
    const cgroup = await group({ maxProcesses: 50 });
    const { child, exited } = launch(launcherLimitLines({ procsFiles: cgroup.procsFiles }), [
      '/bin/bash',
      '-c',
      `setsid sleep ${sleep} </dev/null >/dev/null 2>&1 &`,
    ]);
    expect(await exited).toEqual({ code: 0, signal: null });
    const [daemon] = await waitFor(() => (sleepers(sleep).length > 0 ? sleepers(sleep) : undefined), {
      what: 'the daemon',
    });
    expect(daemon!.session).toBe(daemon!.pid);
    expect(daemon!.session).not.toBe(child.pid);
    expect(members(cgroup)).toContain(daemon!.pid);
    await cgroup.killAll();
    expect(sleepers(sleep)).toEqual([]);
    expect(members(cgroup)).toEqual([]);
  });

  test('close() is idempotent, removes the group, and keeps the events it saw', async () => {
    const cgroup = await group({ maxProcesses: 4 });
    const { exited } = launch(launcherLimitLines({ procsFiles: cgroup.procsFiles }), [
      '/bin/bash',
      '-c',
      'for i in 1 2 3 4 5 6; do sleep 0.2 & done; wait',
    ]);
    await exited;
    const first = cgroup.close();
    expect(cgroup.close()).toBe(first);
    // A kill asked for while it closes is that close: done once the group is gone.
    await cgroup.killAll();
    for (const dir of cgroup.paths) expect(existsSync(dir)).toBe(false);
    await first;
    await cgroup[Symbol.asyncDispose]();
    await cgroup.killAll();
    for (const dir of cgroup.paths) expect(existsSync(dir)).toBe(false);
    expect((await cgroup.readEvents()).pidsLimitHit).toBe(true);
  });

  test('from inside the sandbox the command can neither leave its cgroup nor raise its limits', async () => {
    const sleep = newMarker();
    const cgroup = await group({ maxProcesses: 50, maxMemoryBytes: 256 * MIB });
    const attempts = [
      // Move to the root of each hierarchy, or to the executor's own group.
      ...parentDirectories(control).flatMap((parent) => [
        `echo $$ > ${posix.dirname(parent)}/cgroup.procs`,
        `echo $$ > ${parent}/cgroup.procs`,
      ]),
      'echo $$ > /sys/fs/cgroup/pids/cgroup.procs',
      'echo $$ > /sys/fs/cgroup/memory/cgroup.procs',
      // Lift its own limits, or remove its group.
      ...cgroup.paths.flatMap((dir) => [
        `echo max > ${dir}/pids.max`,
        `echo -1 > ${dir}/memory.limit_in_bytes`,
        `echo max > ${dir}/memory.max`,
      ]),
      'mount -t cgroup -o pids none /tmp',
      'mount -t cgroup2 none /tmp',
    ];
    const script = `${attempts.map((a) => `(${a}) 2>/dev/null && echo ESCAPED`).join('\n')}\nexec sleep ${sleep}`;
    const { output } = launch(launcherLimitLines({ procsFiles: cgroup.procsFiles }), sandboxed(script));
    const [sleeper] = await waitFor(() => (sleepers(sleep).length > 0 ? sleepers(sleep) : undefined), {
      what: 'the command',
    });
    expect(output.stdout).not.toContain('ESCAPED');
    expect(members(cgroup)).toContain(sleeper!.pid);
    const pidsDir = cgroup.paths.find((dir) => existsSync(posix.join(dir, 'pids.max')))!;
    expect(readFileSync(posix.join(pidsDir, 'pids.max'), 'utf8').trim()).toBe('50');
    for (const dir of cgroup.paths) {
      const file = ['memory.limit_in_bytes', 'memory.max'].map((f) => posix.join(dir, f)).find(existsSync);
      if (file) expect(Number(readFileSync(file, 'utf8'))).toBe(256 * MIB);
    }
  });

  test('the launcher fails the launch when it cannot join the cgroup, before the command runs', async () => {
    const dir = await realpath(await mkdtemp(join(tmpdir(), 'execd-limits-')));
    try {
      const ran = join(dir, 'ran');
      const { exited } = launch(launcherLimitLines({ procsFiles: [join(dir, 'missing', 'cgroup.procs')] }), [
        '/bin/bash',
        '-c',
        `touch ${ran}`,
      ]);
      expect((await exited).code).toBe(LAUNCHER_LIMITS_FAILED_EXIT_CODE);
      expect(existsSync(ran)).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('groups of a dead executor are swept, what outlived it killed; live and foreign ones are kept', async () => {
    const sleep = newMarker();
    const live = await group({ maxProcesses: 50 });
    // A dead owner in this pid namespace: a process that has exited.
    const gone = spawn('sleep', [sleep], { stdio: 'ignore' });
    const deadOwner = await groupOwner(gone.pid!);
    gone.kill('SIGKILL');
    await new Promise((resolve) => gone.once('exit', resolve));
    const parents = parentDirectories(control);
    const stale = parents.map((parent) => posix.join(parent, commandGroupName(deadOwner, 'stale')));
    const busy = parents.map((parent) => posix.join(parent, commandGroupName(deadOwner, 'busy')));
    const foreign = parents.map((parent) =>
      posix.join(parent, commandGroupName({ ...deadOwner, pidNamespace: '1' }, 'foreign')),
    );
    for (const dir of [...stale, ...busy, ...foreign]) mkdirSync(dir);
    const { exited } = launch(
      launcherLimitLines({ procsFiles: busy.map((dir) => posix.join(dir, 'cgroup.procs')) }),
      ['sleep', sleep],
    );
    try {
      await waitFor(() => sleepers(sleep).length === 1, { what: 'the process in the busy group' });
      const result = await sweepStaleCommandGroups(control);
      expect(result.removed).toEqual(expect.arrayContaining([...stale, ...busy]));
      expect(result.busy).toEqual([]);
      // The process left in the dead executor's group is gone, checked on the host.
      expect((await exited).signal).toBe('SIGKILL');
      expect(sleepers(sleep)).toEqual([]);
      for (const dir of [...stale, ...busy]) expect(existsSync(dir)).toBe(false);
      for (const dir of [...foreign, ...live.paths]) expect(existsSync(dir)).toBe(true);
    } finally {
      for (const entry of sleepers(sleep)) process.kill(entry.pid, 'SIGKILL');
      await exited;
      for (const dir of [...busy, ...foreign]) if (existsSync(dir)) rmdirSync(dir);
    }
  });

  test('createCommandCgroup refuses a `none` control, bad limits and a duplicate id', async () => {
    const none: ResourceControl = { kind: 'none', controllers: [], parent: undefined, reason: 'test' };
    await expect(createCommandCgroup(none, {})).rejects.toMatchObject({ code: 'unsupported' });
    await expect(createCommandCgroup(control, { maxProcesses: -1 })).rejects.toMatchObject({
      code: 'invalidParams',
    });
    const first = await createCommandCgroup(control, {}, { id: 'dup' });
    groups.add(first);
    await expect(createCommandCgroup(control, {}, { id: 'dup' })).rejects.toMatchObject({
      code: 'invalidParams',
    });
  });
});

describe('when no cgroup can be used', () => {
  async function fakeProc(mountinfo: string, cgroup: string): Promise<string> {
    const root = await mkdtemp(join(tmpdir(), 'execd-fakeproc-'));
    mkdirSync(join(root, 'self'));
    writeFileSync(join(root, 'self', 'mountinfo'), mountinfo);
    writeFileSync(join(root, 'self', 'cgroup'), cgroup);
    return root;
  }

  test.each([
    ['nothing is mounted', '22 1 0:21 / /proc rw - proc proc rw\n', '0::/\n'],
    [
      'the hierarchies cannot be reached',
      '40 30 0:37 / /nonexistent/unified rw - cgroup2 cgroup2 rw\n38 30 0:35 / /nonexistent/pids rw - cgroup cgroup rw,pids\n',
      '8:pids:/\n0::/\n',
    ],
    ['this process is in no cgroup', '40 30 0:37 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n', ''],
  ])('%s: kind none, with the reason', async (_, mountinfo, cgroup) => {
    const procRoot = await fakeProc(mountinfo, cgroup);
    try {
      const detected = await detectResourceControl({ procRoot });
      expect(detected.kind).toBe('none');
      expect(detected.controllers).toEqual([]);
      expect(detected.reason?.length).toBeGreaterThan(0);
      await expect(createCommandCgroup(detected, DEFAULT_COMMAND_LIMITS)).rejects.toMatchObject({
        code: 'unsupported',
      });
    } finally {
      await rm(procRoot, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!isRoot)('RLIMIT_FSIZE from the launcher', () => {
  test('a sandboxed command can neither write a file past maxFileBytes nor raise the limit', async () => {
    const dir = await realpath(await mkdtemp(join(tmpdir(), 'execd-limits-')));
    try {
      const big = join(dir, 'big');
      const script = `ulimit -Hf unlimited 2>/dev/null && echo RAISED; ulimit -Sf unlimited 2>/dev/null && echo RAISED; head -c ${3 * MIB} /dev/zero > ${big}`;
      const { exited, output } = launch(launcherLimitLines({ maxFileBytes: MIB }), sandboxed(script, [dir]));
      const { code } = await exited;
      expect(output.stdout).not.toContain('RAISED');
      expect(code).not.toBe(0);
      expect(statSync(big).size).toBe(MIB);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('the limit is whole 1024-byte blocks in bash, even in POSIX mode, and 512-byte blocks in sh', async () => {
    const lines = {
      bash: launcherLimitLines({ maxFileBytes: 10 * 1024 + 5 }),
      sh: launcherLimitLines({ maxFileBytes: 10 * 1024 + 5, shell: 'sh' }),
    };
    const bash = launch(['set -o posix', ...lines.bash], ['/bin/sh', '-c', 'cat /proc/self/limits']);
    await bash.exited;
    const sh = spawn('/bin/sh', ['-c', `${lines.sh.join('\n')}\nexec cat /proc/self/limits`], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let shOut = '';
    sh.stdout.setEncoding('utf8').on('data', (text: string) => {
      shOut += text;
    });
    await new Promise((resolve) => sh.once('close', resolve));
    for (const text of [bash.output.stdout, shOut]) {
      expect(text).toMatch(/^Max file size\s+10240\s+10240\s+bytes/m);
    }
  });
});

describe.skipIf(v2.kind !== 'cgroup2')('cgroup v2 command groups', () => {
  test('detection reports what v2 gives here, cgroup.kill reaches a setsid daemon, a CPU limit kills', async () => {
    expect(v2.controllers).toContain('cpu');
    const sleep = newMarker();
    const daemonGroup = await group({}, v2);
    expect(daemonGroup.procsFiles).toHaveLength(1);
    const { exited } = launch(launcherLimitLines({ procsFiles: daemonGroup.procsFiles }), [
      '/bin/bash',
      '-c',
      `setsid sleep ${sleep} </dev/null >/dev/null 2>&1 &`,
    ]);
    await exited;
    const [daemon] = await waitFor(() => (sleepers(sleep).length > 0 ? sleepers(sleep) : undefined), {
      what: 'the daemon',
    });
    expect(members(daemonGroup)).toContain(daemon!.pid);
    await daemonGroup.killAll();
    expect(sleepers(sleep)).toEqual([]);

    const cpuGroup = await group({ maxCpuSeconds: 1 }, v2);
    const busy = launch(
      launcherLimitLines({ procsFiles: cpuGroup.procsFiles }),
      sandboxed('while :; do :; done'),
    );
    await busy.exited;
    expect((await cpuGroup.readEvents()).cpuLimitHit).toBe(true);
    expect(await cpuGroup.readCpuSeconds()).toBeGreaterThanOrEqual(1);
  });
});
