// Process-table probes through /proc (Linux): what a test needs to prove nothing leaked.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** One line of `/proc/PID/stat`, the fields the suites look at. */
export interface ProcStat {
  readonly pid: number;
  readonly ppid: number;
  readonly pgid: number;
  readonly sid: number;
  /** `R`, `S`, `Z` (zombie), ... */
  readonly state: string;
  readonly comm: string;
}

/** Parses `/proc/PID/stat`; undefined once the process is gone. */
export function procStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // comm is in parentheses and may itself contain spaces and parentheses: split at the last ')'.
  const close = text.lastIndexOf(')');
  const comm = text.slice(text.indexOf('(') + 1, close);
  const fields = text.slice(close + 2).split(' ');
  return {
    pid,
    comm,
    state: fields[0] ?? '?',
    ppid: Number(fields[1]),
    pgid: Number(fields[2]),
    sid: Number(fields[3]),
  };
}

/** The command line of `pid`, arguments joined by spaces; '' once it is gone (or for a zombie). */
export function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
  } catch {
    return '';
  }
}

/** Every process currently in the table. */
export function allProcesses(): ProcStat[] {
  const stats: ProcStat[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = procStat(Number(name));
    if (stat) stats.push(stat);
  }
  return stats;
}

/** The descendants of `pid` (children, grandchildren, ...), zombies included. */
export function descendants(pid: number): ProcStat[] {
  const byParent = new Map<number, ProcStat[]>();
  for (const stat of allProcesses()) {
    const siblings = byParent.get(stat.ppid) ?? [];
    siblings.push(stat);
    byParent.set(stat.ppid, siblings);
  }
  const found: ProcStat[] = [];
  const queue = [pid];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const child of byParent.get(next) ?? []) {
      found.push(child);
      queue.push(child.pid);
    }
  }
  return found;
}

/**
 * The live (non-zombie) members of session `sid`, wherever they were re-parented: what a child
 * that leads its own session leaves behind even after its parent died.
 */
export function sessionMembers(sid: number): ProcStat[] {
  return allProcesses().filter((stat) => stat.sid === sid && stat.state !== 'Z');
}

/** Number of open file descriptors of `pid` (`/proc/PID/fd`). */
export function fdCount(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

/** The open file descriptors of `pid` and what each points at (`socket:[123]`, `pipe:[45]`, a path). */
export function openFds(pid: number | 'self'): Map<number, string> {
  const fds = new Map<number, string>();
  for (const name of readdirSync(`/proc/${pid}/fd`)) {
    try {
      fds.set(Number(name), readlinkSync(`/proc/${pid}/fd/${name}`));
    } catch {
      // Closed while we looked (the directory handle of this very listing, for one).
    }
  }
  return fds;
}

/**
 * The descriptor numbers in the output of `ls -l /proc/PID/fd/` run by a command (its own view of
 * what it holds), sorted as strings. The folder `ls` opened to list (`-> /proc/N/fd`, when the
 * shell exec'd `ls` in its place) is left out.
 */
export function listedFds(listing: string): string[] {
  return listing
    .split(/\r?\n/)
    .filter((line) => line.includes(' -> ') && !/ -> \/proc\/\d+\/fd$/.test(line))
    .map((line) => line.split(' -> ')[0]!.split(' ').at(-1)!)
    .sort();
}

/**
 * The processes whose environment carries `NAME=value` (found wherever they are in the tree: an
 * orphan re-parented to init is still found). Processes we may not read are skipped.
 */
export function processesWithEnv(name: string, value: string): ProcStat[] {
  const needle = Buffer.from(`${name}=${value}\0`);
  const found: ProcStat[] = [];
  for (const stat of allProcesses()) {
    let environ: Buffer;
    try {
      environ = readFileSync(`/proc/${stat.pid}/environ`);
    } catch {
      continue;
    }
    if (environ.includes(needle) && stat.state !== 'Z') found.push(stat);
  }
  return found;
}

/** Resident set size of `pid` in bytes (`VmRSS` of `/proc/PID/status`). */
export function rssBytes(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : Number.NaN;
}
