import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { lstat, realpath, stat } from './fs-calls.ts';

/**
 * Workspace files are attacker-controlled: a `.git` can be a FIFO (a blocking `open` would stall
 * the event loop, or with the sync API the whole server), a symlink to a device (opening it as
 * root can have side effects), or a huge file. Every read of one goes through here: opened
 * without blocking and without following a final symlink, checked to be a regular file, bounded.
 */
const SAFE_OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW | constants.O_NOCTTY;

/** The kind of an existing path, after following symlinks: only these two are ever used. */
export type PathKind = 'dir' | 'file';

/**
 * Reads a small regular file: undefined when it is missing, a symlink, not a regular file, or at
 * least `maxBytes` long (too long to be what the caller expects).
 */
export async function readSmallRegularFile(path: string, maxBytes: number): Promise<string | undefined> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(path, SAFE_OPEN_FLAGS);
    const info = await handle.stat();
    if (!info.isFile() || info.size >= maxBytes) return undefined;
    // Sized by the file (plus room to notice it grew), not by the limit: a 20-byte pointer file
    // must not cost a zero-filled megabyte.
    let size = Math.min(maxBytes, info.size + 4096);
    for (;;) {
      const buffer = Buffer.allocUnsafe(size);
      const { bytesRead } = await handle.read(buffer, 0, size, 0);
      if (bytesRead < size) return buffer.toString('utf8', 0, bytesRead);
      if (size >= maxBytes) return undefined;
      size = maxBytes;
    }
  } catch {
    return undefined;
  } finally {
    await handle?.close().catch(() => {});
  }
}

/**
 * The canonical path and kind of an existing directory or regular file (symlinks followed), or
 * undefined for anything else: missing, a FIFO, a socket, a device. `stat` never opens the path.
 */
export async function existingPath(path: string): Promise<{ path: string; kind: PathKind } | undefined> {
  try {
    const info = await stat(path);
    const kind: PathKind | undefined = info.isDirectory() ? 'dir' : info.isFile() ? 'file' : undefined;
    if (kind === undefined) return undefined;
    return { path: await realpath(path), kind };
  } catch {
    return undefined;
  }
}

/** True when something (anything, a dangling symlink included) exists at `path` itself. */
export async function pathEntryExists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * The canonical path of an existing directory (symlinks followed), or undefined. One call where
 * {@link existingPath} takes two: `realpath` of `path/.` resolves only when `path` is a directory
 * this process may search (`ENOTDIR`, `ENOENT`, `EACCES` otherwise). Every launch resolves its cwd
 * and each writable root this way, all at once.
 */
export async function canonicalDir(path: string): Promise<string | undefined> {
  try {
    return await realpath(`${path}/.`);
  } catch {
    return undefined;
  }
}

/** True when `path` itself (not a symlink's target) is a FIFO, socket or device node. */
export async function isSpecialFile(path: string): Promise<boolean> {
  try {
    const info = await lstat(path);
    return info.isFIFO() || info.isSocket() || info.isCharacterDevice() || info.isBlockDevice();
  } catch {
    return false;
  }
}
