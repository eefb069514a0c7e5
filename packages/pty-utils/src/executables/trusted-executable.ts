import { accessSync, constants } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDirContaining } from '../internal/temp-dirs.ts';

/**
 * The only folders helpers (`unshare`, `nsenter`, `ip`, `ifconfig`, `sh`) are taken from, in this
 * order. Never `$PATH`: a sandboxed command may write a folder on the server's PATH (a workspace
 * `bin/`, `~/.local/bin`) and plant an `ip` that the next launch would run outside the sandbox.
 */
export const TRUSTED_SYSTEM_DIRS: readonly string[] = ['/usr/sbin', '/usr/bin', '/sbin', '/bin'];

/** Tried after the system folders, and only when they and the helper are owned by root. */
export const ROOT_ONLY_DIRS: readonly string[] = ['/usr/local/sbin', '/usr/local/bin'];

/** The `PATH` given to the bridge's processes (they look nothing up, but a sane value costs nothing). */
export const TRUSTED_PATH: string = TRUSTED_SYSTEM_DIRS.join(':');

/**
 * Why `path` must not be run by the executor, or undefined when it may: it (after resolving
 * symlinks) and every folder above it, and every folder above the folder it was found in, must be
 * owned by root (or, unless `rootOnly`, by this user) and not writable by group or others, and
 * none may lie under a temp folder. The file must be a regular executable file.
 */
export async function untrustedReason(path: string, rootOnly = false): Promise<string | undefined> {
  const myUid = process.getuid?.() ?? 0;
  const ownerOk = (uid: number): boolean => uid === 0 || (!rootOnly && uid === myUid);
  let real: string;
  try {
    real = await realpath(path);
  } catch (error) {
    return `${path}: ${(error as NodeJS.ErrnoException).code ?? 'cannot resolve'}`;
  }
  const file = await stat(real);
  if (!file.isFile() || (file.mode & 0o111) === 0) return `${real} is not an executable file`;
  const temp = (await tempDirContaining(real)) ?? (await tempDirContaining(path));
  if (temp !== undefined) return `${real} is under the temp folder ${temp}`;
  const checked = new Set<string>();
  const chains = [real, await realpath(dirname(path))];
  for (const start of chains) {
    let current = start;
    for (;;) {
      if (!checked.has(current)) {
        checked.add(current);
        const info = await stat(current);
        if (!ownerOk(info.uid)) return `${current} is owned by uid ${info.uid}`;
        if ((info.mode & 0o022) !== 0) return `${current} is writable by group or others`;
      }
      const parent = dirname(current);
      if (parent === current) break;
      current = parent;
    }
  }
  return undefined;
}

/**
 * Absolute path of the helper `name` from the trusted folders (system folders first, then the
 * root-only `/usr/local` ones), skipping candidates that `untrustedReason` refuses; undefined when
 * there is none. Uncached: use `trustedExecutable`.
 */
export async function findTrustedExecutable(
  name: string,
  dirs: readonly string[] = TRUSTED_SYSTEM_DIRS,
  rootOnlyDirs: readonly string[] = ROOT_ONLY_DIRS,
): Promise<string | undefined> {
  if (name.includes('/')) return undefined;
  const candidates = [
    ...dirs.map((dir) => ({ dir, rootOnly: false })),
    ...rootOnlyDirs.map((dir) => ({ dir, rootOnly: true })),
  ];
  for (const { dir, rootOnly } of candidates) {
    const candidate = join(dir, name);
    if ((await untrustedReason(candidate, rootOnly).catch(() => 'unreadable')) === undefined)
      return candidate;
  }
  return undefined;
}

const resolved = new Map<string, Promise<string | undefined>>();

/** `findTrustedExecutable(name)`, resolved once per process (the system folders do not move). */
export function trustedExecutable(name: string): Promise<string | undefined> {
  let found = resolved.get(name);
  if (found === undefined) {
    found = findTrustedExecutable(name);
    resolved.set(name, found);
  }
  return found;
}

/**
 * Where the bridge script is: `bridge.js` next to the bundle (`dist/`), or, when this module runs
 * from `src/` (tests), the package's built `dist/bridge.js`. Undefined when neither exists.
 */
export function defaultBridgeScript(): string | undefined {
  const candidates = [
    new URL('./bridge.js', import.meta.url),
    new URL('../../dist/bridge.js', import.meta.url),
  ];
  for (const candidate of candidates) {
    const path = fileURLToPath(candidate);
    try {
      accessSync(path, constants.R_OK);
      return path;
    } catch {
      // try the next one
    }
  }
  return undefined;
}
