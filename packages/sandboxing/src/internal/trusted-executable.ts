import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * Where helpers that run outside the sandbox (bash for the launcher, bubblewrap) may come from:
 * system folders only, never `$PATH`, where a sandboxed command with a writable folder on the
 * executor's PATH could plant one. `/usr/local` last, and only when root-owned like the others.
 */
export const TRUSTED_BIN_DIRS: readonly string[] = [
  '/usr/bin',
  '/bin',
  '/usr/sbin',
  '/sbin',
  '/usr/local/bin',
  '/usr/local/sbin',
];

/** Owned by root or by this process's user, and writable by nobody else. */
function trustedNode(path: string): boolean {
  const info = statSync(path);
  const uid = process.getuid?.() ?? 0;
  return (info.uid === 0 || info.uid === uid) && (info.mode & 0o022) === 0;
}

/**
 * True when `path` (after symlinks) is an executable regular file that only root or this user can
 * replace: the file and every folder up to `/` are owned by root (or this user) and not group- or
 * world-writable. Sync, but only `stat`s system paths at start (results are cached by callers).
 */
export function isTrustedExecutable(path: string): boolean {
  try {
    const real = realpathSync(path);
    if (!statSync(real).isFile()) return false;
    accessSync(real, constants.X_OK);
    for (let node = real; ; node = dirname(node)) {
      if (!trustedNode(node)) return false;
      if (node === '/') return true;
    }
  } catch {
    return false;
  }
}

/** The canonical path of `name` in the first {@link TRUSTED_BIN_DIRS} entry that holds a trusted one. */
export function findTrustedExecutable(name: string): string | undefined {
  for (const dir of TRUSTED_BIN_DIRS) {
    const candidate = join(dir, name);
    if (isTrustedExecutable(candidate)) return realpathSync(candidate);
  }
  return undefined;
}
