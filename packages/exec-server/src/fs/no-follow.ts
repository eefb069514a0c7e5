import type { Stats } from 'node:fs';
import { lstat, mkdir, rmdir, unlink } from 'node:fs/promises';
import { join, parse, sep } from 'node:path';
import { ExecError, RpcError } from '@execd/protocol';
import { errnoCode, fsCall, osError, refused } from './fs-errors.ts';

// The original's `followSymlinks: false` mode opens each component with O_NOFOLLOW. Node has no
// openat, so each component is lstat'ed instead (a final symlink is still caught by O_NOFOLLOW on
// open); a symlink swapped in on the way between the check and the use is not detected.

/** The components of an absolute path: `/a/b` -> `['/a', '/a/b']`. */
function prefixes(path: string): string[] {
  const { root } = parse(path);
  const out: string[] = [];
  let current = root;
  for (const part of path.slice(root.length).split(sep).filter(Boolean)) {
    current = join(current, part);
    out.push(current);
  }
  return out;
}

/** Checks every parent of `path`: a symlink or a non-directory on the way is `Not a directory`. */
export async function checkParentsNoFollow(path: string): Promise<void> {
  for (const parent of prefixes(path).slice(0, -1)) {
    const stats = await fsCall(() => lstat(parent));
    if (stats.isSymbolicLink() || !stats.isDirectory()) throw osError('ENOTDIR');
  }
}

/** `fs/createDirectory` without following: a symlink or file anywhere on the path is `Not a directory`. */
export async function createDirectoryNoFollow(path: string, recursive: boolean): Promise<void> {
  const all = prefixes(path);
  for (const [index, current] of all.entries()) {
    const last = index === all.length - 1;
    let stats: Stats | undefined;
    try {
      stats = await lstat(current);
    } catch (error) {
      if (errnoCode(error) !== 'ENOENT') throw osError(errnoCode(error) ?? 'EIO', error);
    }
    if (stats === undefined) {
      if (!recursive && !last) throw osError('ENOENT');
      await fsCall(() => mkdir(current));
      continue;
    }
    if (stats.isSymbolicLink() || !stats.isDirectory()) throw osError('ENOTDIR');
    if (last && !recursive) throw osError('EEXIST');
  }
}

/** `fs/remove` without following: only `recursive: false`; a symlink at the path is refused. */
export async function removeNoFollow(
  path: string,
  options: { recursive: boolean; force: boolean },
): Promise<void> {
  if (options.recursive) throw new RpcError('internal', 'recursive no-follow removal is unsupported');
  await checkParentsNoFollow(path).catch((error: unknown) => {
    if (!(options.force && ExecError.is(error) && error.code === 'notFound')) throw error;
  });
  let stats: Stats;
  try {
    stats = await fsCall(() => lstat(path));
  } catch (error) {
    if (options.force && ExecError.is(error) && error.code === 'notFound') return;
    throw error;
  }
  if (stats.isSymbolicLink()) throw refused('path contains a symbolic link');
  await fsCall(() => (stats.isDirectory() ? rmdir(path) : unlink(path)));
}
