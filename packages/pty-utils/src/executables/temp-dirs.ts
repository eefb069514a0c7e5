import { realpath } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';

/**
 * Folders every sandboxed command may be allowed to write (workspace-write makes /tmp and $TMPDIR
 * writable), and the shared scratch folders of the host. Nothing the executor must trust may live
 * under one of these: not the proxy's sockets, not the helpers it runs.
 */
const STATIC_TEMP_DIRS: readonly string[] = ['/tmp', '/var/tmp', '/dev/shm'];

/** Resolves symlinks of the longest existing prefix of `path` (the rest is appended as written). */
export async function realpathOfNearest(path: string): Promise<string> {
  const absolute = resolve(path);
  const missing: string[] = [];
  let current = absolute;
  for (;;) {
    try {
      return join(await realpath(current), ...missing.reverse());
    } catch {
      const parent = dirname(current);
      if (parent === current) return absolute;
      missing.push(current.slice(parent.length).replace(/^\/+/, ''));
      current = parent;
    }
  }
}

/**
 * The temp folders as real paths: /tmp, /var/tmp, /dev/shm, `os.tmpdir()` and `$TMPDIR`, `$TMP`,
 * `$TEMP`. `/` itself is left out (a `TMPDIR=/` would otherwise make every path a temp path).
 */
export async function tempDirs(): Promise<readonly string[]> {
  const env = [process.env.TMPDIR, process.env.TMP, process.env.TEMP];
  const candidates = [...STATIC_TEMP_DIRS, tmpdir(), ...env].filter(
    (dir): dir is string => typeof dir === 'string' && dir.startsWith('/'),
  );
  const real = await Promise.all(candidates.map(realpathOfNearest));
  return [...new Set(real)].filter((dir) => dir !== '/');
}

/** The temp folder `path` lies in (after resolving symlinks), or undefined. */
export async function tempDirContaining(path: string): Promise<string | undefined> {
  const real = await realpathOfNearest(path);
  const roots = await tempDirs();
  return roots.find((root) => real === root || real.startsWith(`${root}${sep}`));
}
