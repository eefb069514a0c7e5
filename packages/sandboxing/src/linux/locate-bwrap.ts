import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { untrustedReason } from '@execd/pty-utils';

/** Options of {@link locateBwrap}. */
export interface LocateBwrapOptions {
  /** The search path (default: this process's `PATH`, not the command's). */
  readonly searchPath?: string | undefined;
  /**
   * Directories a candidate must not be inside: the cwd and the writable roots, where a
   * sandboxed command (or the workspace's author) could have planted a fake `bwrap`. `/` is
   * ignored here, so a root cwd or a full-disk-write policy does not hide the system's bwrap.
   */
  readonly untrustedDirs?: readonly string[];
}

function inside(dir: string, path: string): boolean {
  return dir !== '/' && (path === dir || path.startsWith(`${dir}/`));
}

function canonical(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return path;
  }
}

/**
 * Finds the first executable `bwrap` on the search path, skipping relative entries, any
 * candidate (or its symlink target) inside an untrusted directory, and any that `untrustedReason`
 * refuses: one another user could replace (not root/our own, or group/world-writable, itself or a
 * folder above it) or under a temp folder. Undefined when none is found.
 */
export function locateBwrap(options: LocateBwrapOptions = {}): string | undefined {
  const searchPath = options.searchPath ?? process.env.PATH ?? '';
  const untrusted = (options.untrustedDirs ?? []).map(canonical);
  for (const entry of searchPath.split(delimiter)) {
    if (entry === '' || !isAbsolute(entry)) continue;
    const candidate = join(entry, 'bwrap');
    try {
      // Most entries have none: no exception to build for those (every plan looks).
      if (statSync(candidate, { throwIfNoEntry: false })?.isFile() !== true) continue;
      accessSync(candidate, constants.X_OK);
    } catch {
      continue;
    }
    const real = canonical(candidate);
    if (untrusted.some((dir) => inside(dir, candidate) || inside(dir, real) || inside(dir, canonical(entry))))
      continue;
    // It runs as the executor, outside every sandbox: only a binary nobody else can replace (a
    // sandbox of another workspace may have planted one in a shared folder on PATH, e.g. /tmp).
    if (untrustedReason(real) !== undefined) continue;
    return real;
  }
  return undefined;
}
