import { copyFile, lstat, mkdir, opendir, readlink, realpath, symlink } from 'node:fs/promises';
import { basename, dirname, join, sep } from 'node:path';
import { fsCall, refused } from './fs-errors.ts';

const ONLY_SUPPORTED = 'fs/copy only supports regular files, directories, and symlinks';

/** The canonical form of a path that may not exist yet: its parent's realpath + its name. */
async function canonicalTarget(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch {
    const parent = await realpath(dirname(path)).catch(() => dirname(path));
    return join(parent, basename(path));
  }
}

async function copyEntry(source: string, destination: string): Promise<void> {
  const stats = await fsCall(() => lstat(source));
  if (stats.isSymbolicLink()) {
    const target = await fsCall(() => readlink(source));
    await fsCall(() => symlink(target, destination));
  } else if (stats.isFile()) {
    await fsCall(() => copyFile(source, destination));
  } else if (stats.isDirectory()) {
    await fsCall(() => mkdir(destination));
    const directory = await fsCall(() => opendir(source));
    for await (const entry of directory)
      await copyEntry(join(source, entry.name), join(destination, entry.name));
  }
  // Anything else (a FIFO, socket or device) inside a tree is skipped, as the original does; a
  // special file given as the source itself was refused before.
}

/**
 * `fs/copy` as the original: a symlink is copied as a link, a file (onto an existing file it
 * overwrites), or with `recursive` a directory tree into a new directory (`File exists` when the
 * destination exists). Copying a directory into itself is refused up front.
 */
export async function copyPath(source: string, destination: string, recursive: boolean): Promise<void> {
  const stats = await fsCall(() => lstat(source));
  if (stats.isDirectory()) {
    if (!recursive) throw refused('fs/copy requires recursive: true when sourcePath is a directory');
    const from = await fsCall(() => realpath(source));
    const to = await canonicalTarget(destination);
    if (to === from || to.startsWith(from.endsWith(sep) ? from : `${from}${sep}`))
      throw refused('fs/copy cannot copy a directory to itself or one of its descendants');
  } else if (!stats.isFile() && !stats.isSymbolicLink()) {
    throw refused(ONLY_SUPPORTED);
  }
  await copyEntry(source, destination);
}
