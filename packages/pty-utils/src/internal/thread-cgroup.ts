import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { posix } from 'node:path';
import type { Logger } from '@execd/protocol';
import type { ResolvedSpawn } from '../executables/resolve-program.ts';
import type { SpawnOptions } from '../types.ts';
import { type JoinedSpawn, joinCgroupsCommand, joinWrapperPerl } from './cgroup-join.ts';
import { strayDescriptorsOpen } from './stray-descriptors.ts';

/**
 * Joining a command's cgroups without a wrapper exec, on cgroup v1.
 *
 * A child is born in the cgroups of the thread that forks it, and v1 moves a single thread when
 * `0` (the writing thread) is written to a group's `tasks` file. So the spawning thread steps
 * into the command's groups, forks, and steps back, all in one synchronous step: no other work
 * of the executor runs while it is inside, and the child and everything it ever starts (a
 * `setsid` daemon forked on its first instruction included) are members from birth. A thread the
 * fork itself started (node-pty's waiter) is moved back by its id. This spares the perl
 * wrapper's exec (about as much as the spawn itself); v2 moves whole processes only, so there
 * the wrapper stays.
 */

/**
 * Forks a child that starts in `options.joinCgroups` (when there are any): from inside the groups
 * when `options.cgroupHome` allows it, else through the join wrapper. `direct` forks the program
 * itself (synchronously), `wrapped` the wrapper's command line. While a terminal master of this
 * process is open, the child always goes through the wrapper, which closes it.
 */
export function forkJoiningCgroups<T>(
  options: Pick<SpawnOptions, 'joinCgroups' | 'cgroupHome'>,
  resolved: ResolvedSpawn,
  logger: Logger,
  direct: () => T,
  wrapped: (joined: JoinedSpawn) => T,
): T {
  const groups = options.joinCgroups ?? [];
  // A terminal master of this process is open: the wrapper closes it (and everything else above
  // 2) in the child, joining no group itself (`stray-descriptors.ts`).
  const closing = process.platform === 'linux' && strayDescriptorsOpen() && joinWrapperPerl() !== null;
  const fork = closing ? () => wrapped(joinCgroupsCommand([], resolved)) : direct;
  if (groups.length === 0) return fork();
  const plan = threadJoinPlan(groups, options.cgroupHome);
  const inside = plan === undefined ? undefined : forkInsideGroups(plan, fork, logger);
  return inside === undefined ? wrapped(joinCgroupsCommand(groups, resolved)) : inside.value;
}

/** Where the spawning thread goes for the fork, and where it returns. */
interface ThreadJoin {
  /** The command groups' `tasks` files. */
  readonly into: readonly string[];
  /** The spawning thread's own groups' `tasks` files, in the same hierarchies. */
  readonly back: readonly string[];
}

/** Home `tasks` files found writable (true) or not (false), so each is tried once. */
const homeUsable = new Map<string, boolean>();

function enter(tasksFile: string): void {
  writeFileSync(tasksFile, '0');
}

/**
 * The thread move for `procsFiles` (v1 `cgroup.procs` files) given the thread's own groups
 * (`homeTasksFiles`, one per hierarchy, same order); undefined when it cannot be used and the
 * wrapper must join. A home is proven writable once, by moving the thread to where it already is.
 */
function threadJoinPlan(
  procsFiles: readonly string[],
  homeTasksFiles: readonly string[] | undefined,
): ThreadJoin | undefined {
  if (process.platform !== 'linux') return undefined;
  if (homeTasksFiles === undefined || homeTasksFiles.length !== procsFiles.length) return undefined;
  const into: string[] = [];
  for (const file of procsFiles) {
    if (posix.basename(file) !== 'cgroup.procs') return undefined;
    into.push(posix.join(posix.dirname(file), 'tasks'));
  }
  for (const home of homeTasksFiles) {
    let usable = homeUsable.get(home);
    if (usable === undefined) {
      try {
        enter(home);
        usable = true;
      } catch {
        usable = false;
      }
      homeUsable.set(home, usable);
    }
    if (!usable) return undefined;
  }
  return { into, back: homeTasksFiles };
}

/**
 * Runs `fork` (which must fork synchronously) with the calling thread inside the groups of
 * `plan`, then moves the thread home. Returns undefined without calling `fork` when a move in
 * fails (the caller falls back to the wrapper, which reports the failure as the command's).
 */
function forkInsideGroups<T>(plan: ThreadJoin, fork: () => T, logger: Logger): { value: T } | undefined {
  let moved = 0;
  try {
    for (const file of plan.into) {
      enter(file);
      moved += 1;
    }
  } catch (error) {
    logger.debug('cannot fork inside the command cgroup; joining through the wrapper', { error });
    goHome(plan, moved, logger);
    return undefined;
  }
  try {
    return { value: fork() };
  } finally {
    goHome(plan, moved, logger);
    bringThreadsHome(plan, moved, logger);
  }
}

/**
 * Moves back any other thread of this process that `fork` started while the spawning thread was
 * inside a group (node-pty starts one to wait for its child): found in the group's `tasks`.
 */
function bringThreadsHome(plan: ThreadJoin, moved: number, logger: Logger): void {
  for (let i = 0; i < moved; i++) {
    let tids: string[];
    try {
      tids = readFileSync(plan.into[i]!, 'utf8').split('\n');
    } catch {
      continue; // the group is gone: nothing of ours can be in it
    }
    for (const tid of tids) {
      if (tid === '' || !existsSync(`/proc/self/task/${tid}`)) continue;
      try {
        writeFileSync(plan.back[i]!, tid);
      } catch (error) {
        logger.error('a thread of the executor could not leave a command cgroup', { tid, error });
      }
    }
  }
}

function goHome(plan: ThreadJoin, moved: number, logger: Logger): void {
  for (let i = 0; i < moved; i++) {
    const home = plan.back[i]!;
    try {
      enter(home);
    } catch (error) {
      // Proven writable before; if it no longer is, later spawns use the wrapper. The thread
      // stays in a command group, whose kill never signals the executor itself.
      homeUsable.set(home, false);
      logger.error('the spawning thread could not leave a command cgroup', { home, error });
    }
  }
}
