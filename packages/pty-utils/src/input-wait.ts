import { open, readdir, readFile, stat } from 'node:fs/promises';

/**
 * Syscall numbers of the waits that can mean "blocked reading the terminal", per architecture
 * (`/proc/PID/syscall` reports the raw number). Architectures without a table are never judged
 * waiting: no answer is always safe, a wrong one cuts a command short.
 */
interface SyscallTable {
  /** A parent waiting for its children (`wait4`, `waitid`): the children must be looked at. */
  readonly wait: readonly number[];
  readonly read: readonly number[];
  readonly select: readonly number[];
  readonly poll: readonly number[];
  readonly epoll: readonly number[];
}

const SYSCALLS: Readonly<Record<string, SyscallTable>> = {
  // read, pread64, readv | select, pselect6 | poll, ppoll | epoll_wait, epoll_pwait, epoll_pwait2
  x64: { wait: [61, 247], read: [0, 17, 19], select: [23, 270], poll: [7, 271], epoll: [232, 281, 441] },
  // read, readv, pread64 | pselect6 | ppoll | epoll_pwait, epoll_pwait2
  arm64: { wait: [260, 95], read: [63, 65, 67], select: [72], poll: [73], epoll: [22, 441] },
};

/** `POLLIN` / `EPOLLIN`: the wait is for readable data. */
const POLLIN = 0x1;

/** Largest `nfds` whose `fd_set` bitmap is read from the process (1024 is `FD_SETSIZE`). */
const MAX_SELECT_FDS = 1024;

/** Largest `pollfd` array read from the process (8 bytes each). */
const MAX_POLL_FDS = 4096;

/** The fields of `/proc/PID/stat` the detector uses. */
interface StatFields {
  readonly state: string;
  readonly pgrp: number;
  readonly ttyNr: number;
  readonly tpgid: number;
}

/** Why a terminal is (not) waiting for input, for logs and tests. */
export type InputWaitReason =
  /** Some foreground process is blocked reading the terminal and none is running. */
  | 'waiting'
  /** A foreground process is running (or in uninterruptible sleep): it computes. */
  | 'busy'
  /** The foreground processes sleep, but not on the terminal (a timer, a pipe, a child). */
  | 'elsewhere'
  /** The process is gone, has no terminal, or /proc cannot tell (other OS, no permission). */
  | 'unknown';

async function readStat(path: string): Promise<StatFields | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'latin1');
  } catch {
    return undefined;
  }
  // `pid (comm) state ppid pgrp session tty_nr tpgid ...`; comm may contain spaces and parentheses.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const [state, , pgrp, , ttyNr, tpgid] = fields;
  if (state === undefined || pgrp === undefined || ttyNr === undefined || tpgid === undefined)
    return undefined;
  return { state, pgrp: Number(pgrp), ttyNr: Number(ttyNr), tpgid: Number(tpgid) };
}

function isRunning(state: string): boolean {
  // R: on a CPU or runnable; D: uninterruptible (disk I/O); both mean the program is working.
  return state === 'R' || state === 'D';
}

/** The pids of process group `pgrp` (a /proc scan; zombies left out). */
async function groupMembers(pgrp: number): Promise<number[]> {
  const names = await readdir('/proc');
  const members: number[] = [];
  await Promise.all(
    names.map(async (name) => {
      const pid = Number(name);
      if (!Number.isInteger(pid)) return;
      const fields = await readStat(`/proc/${pid}/stat`);
      if (fields !== undefined && fields.pgrp === pgrp && fields.state !== 'Z' && fields.state !== 'X') {
        members.push(pid);
      }
    }),
  );
  return members;
}

/** True when any thread of `pid` is running. */
async function anyThreadRunning(pid: number): Promise<boolean> {
  let tids: string[];
  try {
    tids = await readdir(`/proc/${pid}/task`);
  } catch {
    return false;
  }
  const states = await Promise.all(tids.map((tid) => readStat(`/proc/${pid}/task/${tid}/stat`)));
  return states.some((fields) => fields !== undefined && isRunning(fields.state));
}

/** Reads `length` bytes of `pid`'s memory at `address`; undefined when not allowed. */
async function readMemory(pid: number, address: number, length: number): Promise<Buffer | undefined> {
  if (!Number.isSafeInteger(address) || address <= 0 || length <= 0) return undefined;
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(`/proc/${pid}/mem`, 'r');
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, address);
    return bytesRead === length ? buffer : undefined;
  } catch {
    return undefined;
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/** Judges one process: is its (main thread's) current syscall a wait on the terminal? */
class TerminalWaitCheck {
  readonly #pid: number;
  readonly #ttyNr: number;
  readonly #table: SyscallTable;

  constructor(pid: number, ttyNr: number, table: SyscallTable) {
    this.#pid = pid;
    this.#ttyNr = ttyNr;
    this.#table = table;
  }

  /** True when fd `fd` of the process is the terminal (compared by device number). */
  async isTerminal(fd: number): Promise<boolean> {
    if (!Number.isInteger(fd) || fd < 0) return false;
    try {
      const info = await stat(`/proc/${this.#pid}/fd/${fd}`);
      return info.isCharacterDevice() && info.rdev === this.#ttyNr;
    } catch {
      return false;
    }
  }

  /** What the process is blocked in: on the terminal, waiting for its children, or elsewhere. */
  async blockedIn(): Promise<'terminal' | 'children' | 'elsewhere'> {
    let text: string;
    try {
      text = (await readFile(`/proc/${this.#pid}/syscall`, 'latin1')).trim();
    } catch {
      return 'elsewhere';
    }
    // `running`, `-1 sp pc` (blocked outside a syscall), or `nr arg1..arg6 sp pc` in hex.
    const parts = text.split(' ');
    const nr = Number(parts[0]);
    if (parts.length < 7 || !Number.isInteger(nr) || nr < 0) return 'elsewhere';
    if (this.#table.wait.includes(nr)) return 'children';
    return (await this.#onTerminal(nr, parts)) ? 'terminal' : 'elsewhere';
  }

  async #onTerminal(nr: number, parts: readonly string[]): Promise<boolean> {
    const args = parts.slice(1, 7).map((hex) => Number.parseInt(hex, 16));
    const [arg0 = -1, arg1 = 0] = args;
    if (this.#table.read.includes(nr)) return this.isTerminal(arg0);
    if (this.#table.select.includes(nr)) return this.#selectOnTerminal(arg0, arg1);
    if (this.#table.poll.includes(nr)) return this.#pollOnTerminal(arg0, arg1);
    if (this.#table.epoll.includes(nr)) return this.#epollOnTerminal(arg0);
    return false;
  }

  async #selectOnTerminal(nfds: number, readfds: number): Promise<boolean> {
    if (nfds <= 0 || nfds > MAX_SELECT_FDS || readfds === 0) return false;
    const bitmap = await readMemory(this.#pid, readfds, Math.ceil(nfds / 64) * 8);
    // Without access to the bitmap, only a set that can hold nothing but fd 0 is judged.
    if (bitmap === undefined) return nfds === 1 && this.isTerminal(0);
    for (let fd = 0; fd < nfds; fd++) {
      const byte = bitmap[fd >> 3] ?? 0;
      if ((byte & (1 << (fd & 7))) !== 0 && (await this.isTerminal(fd))) return true;
    }
    return false;
  }

  async #pollOnTerminal(fds: number, nfds: number): Promise<boolean> {
    if (nfds <= 0 || nfds > MAX_POLL_FDS) return false;
    const array = await readMemory(this.#pid, fds, nfds * 8);
    if (array === undefined) return false;
    for (let index = 0; index < nfds; index++) {
      // struct pollfd { int fd; short events; short revents; }
      const fd = array.readInt32LE(index * 8);
      const events = array.readInt16LE(index * 8 + 4);
      if ((events & POLLIN) !== 0 && (await this.isTerminal(fd))) return true;
    }
    return false;
  }

  async #epollOnTerminal(epfd: number): Promise<boolean> {
    let info: string;
    try {
      info = await readFile(`/proc/${this.#pid}/fdinfo/${epfd}`, 'latin1');
    } catch {
      return false;
    }
    // One line per watched fd: `tfd:       20 events:       19 data: ...` (events in hex).
    for (const match of info.matchAll(/^tfd:\s*(\d+)\s+events:\s*([0-9a-f]+)/gm)) {
      const events = Number.parseInt(match[2] ?? '0', 16);
      if ((events & POLLIN) !== 0 && (await this.isTerminal(Number(match[1])))) return true;
    }
    return false;
  }
}

/**
 * Whether the terminal of `pid` (the child spawned in a PTY) is waiting for input, judged from
 * Linux `/proc`: the terminal's foreground process group (`tpgid`) is found, and the terminal
 * waits when none of its processes runs and at least one is blocked in a read of the terminal,
 * or in a `select`/`poll`/`epoll` wait that includes the terminal for reading. A program that
 * computes, sleeps, waits for a child or reads a pipe or a file is not waiting. Anything /proc
 * cannot tell (another OS, another architecture, a process gone) answers `unknown`, never
 * `waiting`. The caller decides how long output must have been quiet before it asks.
 */
export async function probeInputWait(pid: number): Promise<InputWaitReason> {
  const table = process.platform === 'linux' ? SYSCALLS[process.arch] : undefined;
  if (table === undefined || !Number.isInteger(pid) || pid <= 0) return 'unknown';
  const leader = await readStat(`/proc/${pid}/stat`);
  if (leader === undefined || leader.ttyNr === 0 || leader.tpgid <= 0) return 'unknown';
  // Fast path, no /proc scan: the child itself is the foreground program and reads the terminal
  // (a REPL, `read`, an interactive shell). What else its group does cannot make it less waiting.
  // The same when it sleeps on anything but its children (a timer, a pipe): no scan either. Only
  // a parent waiting for its children, or a job-control shell's job, needs the group looked at.
  if (leader.pgrp === leader.tpgid) {
    if (await anyThreadRunning(pid)) return 'busy';
    const blocked = await new TerminalWaitCheck(pid, leader.ttyNr, table).blockedIn();
    if (blocked === 'terminal') return (await anyThreadRunning(pid)) ? 'busy' : 'waiting';
    if (blocked === 'elsewhere') return 'elsewhere';
  }
  let members: number[];
  try {
    members = await groupMembers(leader.tpgid);
  } catch {
    return 'unknown';
  }
  if (members.length === 0) return 'unknown';
  const running = await Promise.all(members.map((member) => anyThreadRunning(member)));
  if (running.some(Boolean)) return 'busy';
  const blocked = await Promise.all(
    members.map((member) => new TerminalWaitCheck(member, leader.ttyNr, table).blockedIn()),
  );
  if (!blocked.includes('terminal')) return 'elsewhere';
  // Re-check nobody woke up meanwhile (the reads above take a few milliseconds).
  const after = await Promise.all(members.map((member) => anyThreadRunning(member)));
  return after.some(Boolean) ? 'busy' : 'waiting';
}
