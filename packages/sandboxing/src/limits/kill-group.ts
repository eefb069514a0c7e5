import { setTimeout as sleep } from 'node:timers/promises';
import { errnoCode, readMembers, writeControl } from './cgroup-fs.ts';

/** How often a group is re-read while waiting for its processes to die. */
export const KILL_POLL_INTERVAL_MS = 10;

/** Options of {@link killGroup}. */
export interface KillGroupOptions {
  /** The group's cgroup.procs file(s); every member is in each of them. */
  readonly procsFiles: readonly string[];
  /** v2: the group's `cgroup.kill` (Linux 5.14+); absent or missing: the loop alone. */
  readonly killFile?: string | undefined;
  /** Give up waiting at this `Date.now()` value. */
  readonly deadline: number;
}

function sigkill(pid: number): void {
  // Never the executor itself, whatever was written into the group; 0 is a process of another
  // pid namespace that this one cannot see.
  if (pid === process.pid || pid <= 0) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/**
 * SIGKILLs every process in the group, whatever its session or process group (a `setsid`
 * daemon included), and waits until the group is empty (zombies are not listed) or the
 * deadline passes. Returns whether it emptied. v2's `cgroup.kill` kills atomically, forks
 * included. Without it (v1) the loop reads the members and kills them until none is left: a
 * child forked between a read and the kills is caught by the next round, and the pids limit
 * bounds each round. (A member's pid could in theory be reused between the read and the kill;
 * that needs the whole pid space to wrap within microseconds.)
 */
export async function killGroup(options: KillGroupOptions): Promise<boolean> {
  if (options.killFile !== undefined) {
    try {
      await writeControl(options.killFile, '1');
    } catch (error) {
      if (errnoCode(error) !== 'ENOENT') throw error;
    }
  }
  for (;;) {
    const members = await readMembers(options.procsFiles);
    if (members.length === 0) return true;
    for (const pid of members) sigkill(pid);
    if (Date.now() > options.deadline) return false;
    await sleep(KILL_POLL_INTERVAL_MS);
  }
}
