import { readdir, rmdir } from 'node:fs/promises';
import { posix } from 'node:path';
import { errnoCode } from './cgroup-fs.ts';
import { type GroupOwner, groupOwner, parseCommandGroupName, processStartTime } from './group-name.ts';
import { killGroup } from './kill-group.ts';
import type { ResourceControl } from './resource-control.ts';

/** What a sweep did. */
export interface SweepResult {
  /** Stale groups removed (paths), after killing what was still in them. */
  readonly removed: readonly string[];
  /** Stale groups whose processes did not die in time (stuck in the kernel): left for the next sweep. */
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

/**
 * How long a sweep waits for the SIGKILLed leftovers of one stale group to go. Short: it runs
 * before the first command; a process stuck in uninterruptible sleep is left for the next sweep.
 */
const STALE_KILL_TIMEOUT_MS = 2_000;

/** rmdir: true when the group is gone, false while processes are in it (EBUSY). */
async function removeGroup(path: string): Promise<boolean> {
  try {
    await rmdir(path);
    return true;
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return true;
    if (errnoCode(error) === 'EBUSY') return false;
    throw error;
  }
}

async function ownerAlive(owner: GroupOwner, procRoot: string): Promise<boolean> {
  return (await processStartTime(owner.pid, procRoot)) === owner.startTime;
}

/**
 * Removes command groups left by a crashed executor: children of the `execd` parents named by
 * execd, owned by a process of this pid namespace that is gone (its pid is free, or reused by a
 * process with another start time). Groups of live executors, of other pid namespaces and
 * directories execd did not name are never touched. Processes still in a stale group outlived
 * their command and its executor (a daemon in its own session, which the orphan guard's kill
 * misses): they are SIGKILLed, then the group is removed; one whose processes do not die within
 * {@link STALE_KILL_TIMEOUT_MS} is reported in `busy`.
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
      if (await removeGroup(path)) {
        removed.push(path);
        continue;
      }
      // What is still in it outlived its command and its executor (a `setsid` daemon the
      // orphan guard's session kill missed): killed, as the executor would have at the end.
      await killGroup({
        procsFiles: [posix.join(path, 'cgroup.procs')],
        killFile: control.kind === 'cgroup2' ? posix.join(path, 'cgroup.kill') : undefined,
        deadline: Date.now() + STALE_KILL_TIMEOUT_MS,
      });
      if (await removeGroup(path)) removed.push(path);
      else busy.push(path);
    }
  }
  return { removed, busy };
}
