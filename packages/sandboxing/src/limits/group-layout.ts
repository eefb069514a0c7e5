import { posix } from 'node:path';
import { exists, readFlatKeyed, readNumber, writeControl } from './cgroup-fs.ts';
import type { CommandLimits, LimitEvents, ResourceControl, ResourceController } from './resource-control.ts';

/** Where one command group's files are: one directory on v2, one per controller on v1. */
export interface GroupLayout {
  readonly kind: 'cgroup2' | 'cgroup1';
  /** Controller → its directory (on v2 all map to the one directory). */
  readonly dirs: ReadonlyMap<ResourceController, string>;
  /** The distinct directories, in creation order. */
  readonly paths: readonly string[];
  readonly procsFiles: readonly string[];
  /** v2's cgroup.kill. */
  readonly killFile?: string;
  /** v1: the `tasks` file of the executor's own group above each directory (`<own>/execd/<name>`). */
  readonly homeTasksFiles?: readonly string[];
}

/** The layout of group `name` under a control's parent(s). */
export function groupLayout(control: Exclude<ResourceControl, { kind: 'none' }>, name: string): GroupLayout {
  const dirs = new Map<ResourceController, string>();
  if (control.kind === 'cgroup2') {
    const dir = posix.join(control.parent, name);
    for (const c of control.controllers) dirs.set(c, dir);
    return {
      kind: 'cgroup2',
      dirs,
      paths: [dir],
      procsFiles: [posix.join(dir, 'cgroup.procs')],
      killFile: posix.join(dir, 'cgroup.kill'),
    };
  }
  for (const c of control.controllers) {
    const parent = control.parent[c];
    if (parent !== undefined) dirs.set(c, posix.join(parent, name));
  }
  const paths = [...new Set(dirs.values())];
  return {
    kind: 'cgroup1',
    dirs,
    paths,
    procsFiles: paths.map((p) => posix.join(p, 'cgroup.procs')),
    homeTasksFiles: paths.map((p) => posix.join(posix.dirname(posix.dirname(p)), 'tasks')),
  };
}

/** Writes the limits the layout can enforce; returns those now in force. */
export async function applyLimits(layout: GroupLayout, limits: CommandLimits): Promise<CommandLimits> {
  const applied: { -readonly [K in keyof CommandLimits]: CommandLimits[K] } = {};
  const pids = layout.dirs.get('pids');
  if (pids !== undefined && limits.maxProcesses !== undefined) {
    await writeControl(posix.join(pids, 'pids.max'), String(limits.maxProcesses));
    applied.maxProcesses = limits.maxProcesses;
  }
  const memory = layout.dirs.get('memory');
  if (memory !== undefined && limits.maxMemoryBytes !== undefined) {
    const bytes = String(limits.maxMemoryBytes);
    if (layout.kind === 'cgroup2') {
      await writeControl(posix.join(memory, 'memory.max'), bytes);
      // No swap: otherwise the command could exceed its memory by swapping out.
      if (await exists(posix.join(memory, 'memory.swap.max'))) {
        await writeControl(posix.join(memory, 'memory.swap.max'), '0');
      }
    } else {
      // memory.memsw is memory + swap: the same value leaves no room for swap. It must be set
      // after memory.limit_in_bytes (the kernel keeps memsw >= memory).
      await writeControl(posix.join(memory, 'memory.limit_in_bytes'), bytes);
      if (await exists(posix.join(memory, 'memory.memsw.limit_in_bytes'))) {
        await writeControl(posix.join(memory, 'memory.memsw.limit_in_bytes'), bytes);
      }
    }
    applied.maxMemoryBytes = limits.maxMemoryBytes;
  }
  if (layout.dirs.has('cpu') && limits.maxCpuSeconds !== undefined)
    applied.maxCpuSeconds = limits.maxCpuSeconds;
  return applied;
}

/** The group's CPU time in seconds (v2 `cpu.stat usage_usec`, v1 `cpuacct.usage` in ns). */
export async function readCpuSeconds(layout: GroupLayout): Promise<number | undefined> {
  const dir = layout.dirs.get('cpu');
  if (dir === undefined) return undefined;
  if (layout.kind === 'cgroup2') {
    const usec = (await readFlatKeyed(posix.join(dir, 'cpu.stat'))).usage_usec;
    return usec === undefined ? undefined : usec / 1e6;
  }
  const ns = await readNumber(posix.join(dir, 'cpuacct.usage'));
  return ns === undefined ? undefined : ns / 1e9;
}

/** The limit events of the group so far (without `cpuLimitHit`, which the CPU watch knows). */
export async function readGroupEvents(layout: GroupLayout): Promise<Omit<LimitEvents, 'cpuLimitHit'>> {
  // Every file is read at once: a command's exit waits for these reads (its limit hit is said
  // before the exit is reported).
  const [pidsLimitHit, memory] = await Promise.all([readPidsLimitHit(layout), readMemoryEvents(layout)]);
  return { ...memory, pidsLimitHit };
}

async function readPidsLimitHit(layout: GroupLayout): Promise<boolean> {
  const pids = layout.dirs.get('pids');
  const pidsEvents = pids === undefined ? {} : await readFlatKeyed(posix.join(pids, 'pids.events'));
  return (pidsEvents.max ?? 0) > 0;
}

async function readMemoryEvents(
  layout: GroupLayout,
): Promise<Omit<LimitEvents, 'cpuLimitHit' | 'pidsLimitHit'>> {
  const memory = layout.dirs.get('memory');
  if (memory === undefined) return { memoryLimitHit: false, oomKills: 0 };
  if (layout.kind === 'cgroup2') {
    const events = await readFlatKeyed(posix.join(memory, 'memory.events'));
    const oomKills = events.oom_kill ?? 0;
    return {
      memoryLimitHit: (events.max ?? 0) > 0 || (events.oom ?? 0) > 0 || oomKills > 0,
      oomKills,
    };
  }
  const [failcnt, memswFailcnt, oomControl] = await Promise.all([
    readNumber(posix.join(memory, 'memory.failcnt')),
    readNumber(posix.join(memory, 'memory.memsw.failcnt')),
    readFlatKeyed(posix.join(memory, 'memory.oom_control')),
  ]);
  const oomKills = oomControl.oom_kill ?? 0;
  return {
    memoryLimitHit: (failcnt ?? 0) > 0 || (memswFailcnt ?? 0) > 0 || oomKills > 0,
    oomKills,
  };
}
