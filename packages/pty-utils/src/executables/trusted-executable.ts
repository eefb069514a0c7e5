import { realpathSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tempDirContaining } from './temp-dirs.ts';

/**
 * The folders helpers that run outside every sandbox (`bash` for the launcher, `unshare`,
 * `nsenter`, `ip`, `sh` for the network bridge) are taken from, in this order. Never `$PATH`: a
 * sandboxed command may write a folder on the server's PATH (a workspace `bin/`, `~/.local/bin`)
 * and plant an `ip` that the next launch would run outside the sandbox.
 */
export const TRUSTED_SYSTEM_DIRS: readonly string[] = ['/usr/sbin', '/usr/bin', '/sbin', '/bin'];

/** Tried after the system folders, and only when they and the helper are owned by root. */
export const ROOT_ONLY_DIRS: readonly string[] = ['/usr/local/sbin', '/usr/local/bin'];

/** A `PATH` of the trusted system folders only, for processes the executor runs outside a sandbox. */
export const TRUSTED_PATH: string = TRUSTED_SYSTEM_DIRS.join(':');

// Synchronous on purpose: a handful of stat/realpath calls cost microseconds, results are cached
// per process (`trustedExecutable`), and callers build argv synchronously (the sandbox launcher).

/**
 * Why `path` must not be run by the executor, or undefined when it may: it (after resolving
 * symlinks) and every folder above it, and every folder above the folder it was found in, must be
 * owned by root (or, unless `rootOnly`, by this user) and not writable by group or others, and
 * none may lie under a temp folder. The file must be a regular executable file. Never throws: a
 * path that cannot be read is untrusted.
 */
export function untrustedReason(path: string, rootOnly = false): string | undefined {
  const myUid = process.getuid?.() ?? 0;
  const ownerOk = (uid: number): boolean => uid === 0 || (!rootOnly && uid === myUid);
  let real: string;
  try {
    real = realpathSync.native(path);
  } catch (error) {
    return `${path}: ${(error as NodeJS.ErrnoException).code ?? 'cannot resolve'}`;
  }
  try {
    const file = statSync(real);
    if (!file.isFile() || (file.mode & 0o111) === 0) return `${real} is not an executable file`;
    const temp = tempDirContaining(real) ?? tempDirContaining(path);
    if (temp !== undefined) return `${real} is under the temp folder ${temp}`;
    const checked = new Set<string>();
    for (const start of [real, realpathSync.native(dirname(path))]) {
      for (let current = start; ; current = dirname(current)) {
        if (!checked.has(current)) {
          checked.add(current);
          const info = statSync(current);
          if (!ownerOk(info.uid)) return `${current} is owned by uid ${info.uid}`;
          if ((info.mode & 0o022) !== 0) return `${current} is writable by group or others`;
        }
        if (dirname(current) === current) break;
      }
    }
    return undefined;
  } catch (error) {
    return `${path}: unreadable (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
  }
}

/**
 * Absolute path of the helper `name` from the trusted folders (`dirs` first, then the root-only
 * `rootOnlyDirs`), skipping candidates that `untrustedReason` refuses; undefined when there is
 * none, or when `name` has a slash. Uncached: use `trustedExecutable`.
 */
export function findTrustedExecutable(
  name: string,
  dirs: readonly string[] = TRUSTED_SYSTEM_DIRS,
  rootOnlyDirs: readonly string[] = ROOT_ONLY_DIRS,
): string | undefined {
  if (name.includes('/')) return undefined;
  const candidates = [
    ...dirs.map((dir) => ({ dir, rootOnly: false })),
    ...rootOnlyDirs.map((dir) => ({ dir, rootOnly: true })),
  ];
  for (const { dir, rootOnly } of candidates) {
    const candidate = join(dir, name);
    if (untrustedReason(candidate, rootOnly) === undefined) return candidate;
  }
  return undefined;
}

const resolved = new Map<string, string | undefined>();

/** `findTrustedExecutable(name)`, resolved once per process (the system folders do not move). */
export function trustedExecutable(name: string): string | undefined {
  if (!resolved.has(name)) resolved.set(name, findTrustedExecutable(name));
  return resolved.get(name);
}
