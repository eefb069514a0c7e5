import { closeSync, openSync, readdirSync, readSync } from 'node:fs';

/** The fields of `/proc/<pid>/stat` this package looks at. */
interface ProcStat {
  readonly pid: number;
  /** `R`, `S`, `Z` (zombie: dead, waiting to be reaped), ... */
  readonly state: string;
  readonly pgid: number;
  readonly sid: number;
  /** Clock ticks after boot: tells a pid's process apart from a later one with the same pid. */
  readonly startTime: string;
}

const HAS_PROC = process.platform === 'linux';

/** A `/proc/<pid>/stat` line is well under 1 KiB; the fields we need come first. */
const STAT_READ_BYTES = 1024;
const statBuffer = Buffer.allocUnsafe(STAT_READ_BYTES);

function readProcStat(pid: number): ProcStat | undefined {
  // open/read/close into one shared buffer: several times cheaper than readFileSync on /proc,
  // which matters when a whole /proc scan runs on the event loop.
  let text: string;
  let fd: number | undefined;
  try {
    fd = openSync(`/proc/${pid}/stat`, 'r');
    text = statBuffer.toString('latin1', 0, readSync(fd, statBuffer, 0, STAT_READ_BYTES, 0));
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  // `pid (comm) state ppid pgrp session ...`; comm may itself contain spaces and parentheses.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const [state, , pgid, sid] = fields;
  const startTime = fields[19];
  if (state === undefined || pgid === undefined || sid === undefined || startTime === undefined)
    return undefined;
  return { pid, state, pgid: Number(pgid), sid: Number(sid), startTime };
}

function isLive(stat: ProcStat | undefined): stat is ProcStat {
  // A zombie has exited already; it lingers only until its parent (or a non-reaping init) waits.
  return stat !== undefined && stat.state !== 'Z' && stat.state !== 'X';
}

function scanProc(match: (stat: ProcStat) => boolean): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    const stat = readProcStat(pid);
    if (isLive(stat) && match(stat)) pids.push(pid);
  }
  return pids;
}

function kill0(target: number): boolean {
  try {
    process.kill(target, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * True while `pid` is a running process. On Linux a zombie counts as gone (it has exited and
 * only waits to be reaped); elsewhere this is `kill(pid, 0)`.
 */
/**
 * The start time of `pid` while it runs (Linux), undefined once it is gone or a zombie: compared
 * with an earlier reading, it says whether `pid` is still the same process.
 */
export function liveStartTime(pid: number): string | undefined {
  const stat = HAS_PROC ? readProcStat(pid) : undefined;
  return isLive(stat) ? stat.startTime : undefined;
}

export function isProcessAlive(pid: number): boolean {
  return HAS_PROC ? isLive(readProcStat(pid)) : kill0(pid);
}

/** True while any process of group `pgid` is running (Linux: zombies ignored; elsewhere `kill(-pgid, 0)`). */
export function processGroupAlive(pgid: number): boolean {
  return HAS_PROC ? scanProc((stat) => stat.pgid === pgid).length > 0 : kill0(-pgid);
}

/**
 * The running processes of session `sid`: the child and every descendant that has not started a
 * session of its own, including job-control shells' background jobs in other process groups.
 * Linux only (reads `/proc`); elsewhere an empty list.
 */
export function sessionPids(sid: number): number[] {
  return HAS_PROC ? scanProc((stat) => stat.sid === sid) : [];
}

/** Sends `killSignal` (0: only probe) to process group `pgid`; false when the group no longer exists. */
export function signalProcessGroup(pgid: number, killSignal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, killSignal);
    return true;
  } catch (error) {
    // ESRCH: nobody left. EPERM: only zombies we may not signal (macOS) or not ours; both mean "nothing to do".
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ESRCH' || code === 'EPERM') return false;
    throw error;
  }
}

/**
 * Signals (Linux) every running member of session `sid` outside process group `sid`: what a
 * group signal misses, such as a job-control shell's background jobs. Returns how many it reached.
 */
export function signalSessionOthers(sid: number, killSignal: NodeJS.Signals): number {
  let reached = 0;
  for (const pid of HAS_PROC ? scanProc((stat) => stat.sid === sid && stat.pgid !== sid) : []) {
    try {
      process.kill(pid, killSignal);
      reached += 1;
    } catch {
      // Exited between the scan and the signal.
    }
  }
  return reached;
}

/**
 * Signals a whole process tree rooted at a session leader: its process group, then (Linux) every
 * other running member of its session. Returns how many targets were still there.
 */
export function signalSession(sid: number, killSignal: NodeJS.Signals): number {
  return (signalProcessGroup(sid, killSignal) ? 1 : 0) + signalSessionOthers(sid, killSignal);
}
