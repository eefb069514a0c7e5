import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The variable every unsandboxed command carries when the executor cannot give it a cgroup: a
 * process it starts keeps the marker in its environment whatever its session or process group (a
 * `setsid` daemon, a double-forked orphan), so a scan of `/proc/<pid>/environ` finds it. A
 * process that rebuilds its environment without it (`env -i`) escapes the scan: a cgroup is the
 * containment that nothing escapes; this is the fallback where there is none.
 */
export const CONTAINMENT_MARKER_VARIABLE = 'EXECD_CONTAINMENT_ID';

/** How often {@link killMarked} re-scans while processes it killed are still there. */
const RESCAN_INTERVAL_MS = 10;

/** A new marker value (unique per command). */
export function newContainmentMarker(): string {
  return randomBytes(12).toString('hex');
}

/** Pids (of this pid namespace, this process excluded) whose environment holds `marker`. */
export async function findMarked(marker: string): Promise<number[]> {
  const needle = Buffer.from(`\0${CONTAINMENT_MARKER_VARIABLE}=${marker}\0`);
  const names = (await readdir('/proc')).filter((name) => /^\d+$/.test(name));
  const found = await Promise.all(
    names.map(async (name) => {
      const pid = Number(name);
      if (pid === process.pid) return undefined;
      try {
        // NUL-separated; a leading NUL makes the first variable match like the others.
        const environ = Buffer.concat([Buffer.from([0]), await readFile(`/proc/${pid}/environ`)]);
        return environ.includes(needle) ? pid : undefined;
      } catch {
        return undefined; // gone, or not ours to read
      }
    }),
  );
  return found.filter((pid): pid is number => pid !== undefined);
}

/**
 * SIGKILLs every process carrying `marker` and re-scans until none is left (a child forked
 * between a scan and the kills is caught by the next round) or `deadline` (a `Date.now()` value)
 * passes. Returns whether none is left. Never throws.
 */
export async function killMarked(marker: string, deadline: number): Promise<boolean> {
  for (;;) {
    let pids: number[];
    try {
      pids = await findMarked(marker);
    } catch {
      return false;
    }
    if (pids.length === 0) return true;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    if (Date.now() > deadline) return false;
    await sleep(RESCAN_INTERVAL_MS);
  }
}
