import { closeSync, constants, mkdtempSync, openSync, rmdirSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Linux `O_TMPFILE` (`__O_TMPFILE | O_DIRECTORY`; Node has no constant): an unnamed file in a
 * directory, so no path ever exists that a sandboxed command could write through.
 */
const O_TMPFILE = 0o20000000 | 0o200000;

function writeAll(fd: number, bytes: Uint8Array): void {
  let written = 0;
  while (written < bytes.length) written += writeSync(fd, bytes, written);
}

function openTmpfile(bytes: Uint8Array, directory: string, mode: number): number {
  const fd = openSync(directory, O_TMPFILE | constants.O_RDWR, mode);
  try {
    writeAll(fd, bytes);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return fd;
}

function openUnlinked(bytes: Uint8Array, directory: string, mode: number): number {
  // Fallback for filesystems without O_TMPFILE: a private directory, a file written and opened,
  // then both removed at once; the name exists only for these few calls.
  const dir = mkdtempSync(join(directory, 'execd-unnamed-'));
  const path = join(dir, 'file');
  try {
    const fd = openSync(path, 'wx+', mode);
    writeAll(fd, bytes);
    return fd;
  } finally {
    unlinkSync(path);
    rmdirSync(dir);
  }
}

/**
 * A file of this process holding `bytes` that has no name anywhere (`O_TMPFILE`, or on a file
 * system without it a file removed right after it was opened): the returned fd, read-write,
 * not inherited by children. Other processes of this user reach it only as
 * `/proc/<this pid>/fd/<fd>`, which a sandboxed command cannot see, and only as `mode` allows
 * (opening that path checks the file's permissions).
 */
export function openUnnamedFile(bytes: Uint8Array, mode: number, directory: string = tmpdir()): number {
  try {
    return openTmpfile(bytes, directory, mode);
  } catch {
    return openUnlinked(bytes, directory, mode);
  }
}
