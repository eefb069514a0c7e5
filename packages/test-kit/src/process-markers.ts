import { readdirSync, readFileSync } from 'node:fs';

/** Pids of live processes whose command line contains `marker` (zombies excluded). */
export function pidsMatching(marker: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (!cmdline.includes(marker)) continue;
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (state !== 'Z') pids.push(pid);
    } catch {
      // The process went away while we looked.
    }
  }
  return pids;
}

/** A marker unique to one test, to find its processes in /proc. */
export function uniqueMarker(prefix = 'uexec'): string {
  return `${prefix}-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
}
