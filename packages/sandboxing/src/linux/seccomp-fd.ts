import { closeSync, constants, mkdtempSync, openSync, rmdirSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Linux `O_TMPFILE` (`__O_TMPFILE | O_DIRECTORY`; Node has no constant): an unnamed file in a
 * directory, so no path ever exists that a sandboxed command could write through.
 */
const O_TMPFILE = 0o20000000 | 0o200000;

/** Every distinct filter stays open for the life of this process; there are at most a handful. */
const filterFds = new Map<string, number>();

function writeAll(fd: number, bytes: Uint8Array): void {
  let written = 0;
  while (written < bytes.length) written += writeSync(fd, bytes, written);
}

function openUnnamed(bytes: Uint8Array, directory: string): number {
  const fd = openSync(directory, O_TMPFILE | constants.O_RDWR, 0o400);
  try {
    writeAll(fd, bytes);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return fd;
}

function openUnlinked(bytes: Uint8Array, directory: string): number {
  // Fallback for filesystems without O_TMPFILE: a private directory, a file written and opened,
  // then both removed at once; the name exists only for these few calls.
  const dir = mkdtempSync(join(directory, 'execd-seccomp-'));
  const path = join(dir, 'filter.bpf');
  try {
    const fd = openSync(path, 'wx+', 0o600);
    writeAll(fd, bytes);
    return fd;
  } finally {
    unlinkSync(path);
    rmdirSync(dir);
  }
}

/**
 * A path any process of this user can open to read `bytes`: `/proc/<this pid>/fd/<fd>` of an
 * unnamed file this process keeps open. The sandbox launcher opens it as bwrap's `--seccomp`
 * fd; the sandboxed command cannot reach it (it sees only its own pid namespace).
 */
export function seccompFilterPath(bytes: Uint8Array, directory: string = tmpdir()): string {
  const key = Buffer.from(bytes).toString('base64');
  let fd = filterFds.get(key);
  if (fd === undefined) {
    try {
      fd = openUnnamed(bytes, directory);
    } catch {
      fd = openUnlinked(bytes, directory);
    }
    filterFds.set(key, fd);
  }
  return `/proc/${process.pid}/fd/${fd}`;
}
