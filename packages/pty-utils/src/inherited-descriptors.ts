import { closeSync, readdirSync, readFileSync } from 'node:fs';

/** `O_CLOEXEC` in the `flags` of `/proc/PID/fdinfo/FD` (octal, as the kernel prints it). */
const O_CLOEXEC = 0o2000000;

/**
 * Closes the descriptors above 2 this process inherited open across exec (what its parent left
 * it: a supervisor's pipe, an MCP host's files): every child would inherit them in turn, since
 * libuv closes nothing in a child (Node marks only the lowest inherited ones close-on-exec). For
 * a command-line program that has no use for them (`execd-server`, `uexec`), once at start-up,
 * after it read what it was given by number (`--auth-token-file /dev/fd/N`). Node's own
 * descriptors are all close-on-exec and never touched. Returns the numbers closed; nothing off
 * Linux.
 */
export function closeInheritedDescriptors(): number[] {
  let names: string[];
  try {
    names = readdirSync('/proc/self/fd');
  } catch {
    return [];
  }
  const closed: number[] = [];
  for (const name of names) {
    const fd = Number(name);
    if (!Number.isInteger(fd) || fd <= 2) continue;
    let flags: number;
    try {
      const match = /^flags:\s*([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'));
      if (match === null) continue;
      flags = Number.parseInt(match[1]!, 8);
    } catch {
      continue; // the directory listing's own descriptor, already closed
    }
    if ((flags & O_CLOEXEC) !== 0) continue;
    try {
      closeSync(fd);
      closed.push(fd);
    } catch {
      // Gone meanwhile.
    }
  }
  return closed;
}
