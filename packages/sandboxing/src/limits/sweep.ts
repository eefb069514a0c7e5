import { readdir, rmdir } from 'node:fs/promises';
import { posix } from 'node:path';
import { errnoCode } from './cgroup-fs.ts';
import { type GroupOwner, groupOwner, parseCommandGroupName, processStartTime } from './group-name.ts';
import type { ResourceControl } from './resource-control.ts';

/** What a sweep did. */
export interface SweepResult {
  /** Stale groups removed (paths). */
  readonly removed: readonly string[];
  /** Stale groups left alone because processes are still in them (paths). */
  readonly busy: readonly string[];
}

/** Options of {@link sweepStaleCommandGroups}. */
export interface SweepOptions {
  readonly procRoot?: string | undefined;
}

/** Every `execd` parent directory of a control (one on v2, one per controller on v1). */
export function parentDirectories(control: ResourceControl): string[] {
  if (control.kind === 'none') return [];
  if (control.kind === 'cgroup2') return [control.parent];
  return [...new Set(Object.values(control.parent).filter((d): d is string => d !== undefined))];
}

async function ownerAlive(owner: GroupOwner, procRoot: string): Promise<boolean> {
  return (await processStartTime(owner.pid, procRoot)) === owner.startTime;
}

/**
 * Removes command groups left by a crashed executor: children of the `execd` parents named by
 * execd, owned by a process of this pid namespace that is gone (its pid is free, or reused by a
 * process with another start time). Groups of live executors, of other pid namespaces and
 * directories execd did not name are never touched. A stale group that still holds processes is
 * left (rmdir fails with EBUSY) and reported in `busy`.
 */
export async function sweepStaleCommandGroups(
  control: ResourceControl,
  options: SweepOptions = {},
): Promise<SweepResult> {
  const procRoot = options.procRoot ?? '/proc';
  const self = await groupOwner(process.pid, procRoot);
  const removed: string[] = [];
  const busy: string[] = [];
  for (const parent of parentDirectories(control)) {
    let entries: string[];
    try {
      entries = (await readdir(parent, { withFileTypes: true }))
        .filter((e) => e.isDirectory())
        .map((e) => e.name);
    } catch {
      continue;
    }
    for (const name of entries) {
      const parsed = parseCommandGroupName(name);
      if (parsed === undefined || parsed.owner.pidNamespace !== self.pidNamespace) continue;
      if (await ownerAlive(parsed.owner, procRoot)) continue;
      const path = posix.join(parent, name);
      try {
        await rmdir(path);
        removed.push(path);
      } catch (error) {
        if (errnoCode(error) === 'EBUSY') busy.push(path);
        else if (errnoCode(error) !== 'ENOENT') throw error;
      }
    }
  }
  return { removed, busy };
}
