import { realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';

/**
 * Folders every sandboxed command may be allowed to write (workspace-write makes /tmp and $TMPDIR
 * writable), and the shared scratch folders of the host. Nothing the executor must trust may live
 * under one of these: not the proxy's sockets, not the helpers it runs.
 */
const STATIC_TEMP_DIRS: readonly string[] = ['/tmp', '/var/tmp', '/dev/shm'];

// Synchronous, as the rest of executable lookup: a few realpath calls cost microseconds.

/** Resolves symlinks of the longest existing prefix of `path` (the rest is appended as written). */
function realpathOfNearest(path: string): string {
  const absolute = resolve(path);
  const missing: string[] = [];
  let current = absolute;
  for (;;) {
    try {
      return join(realpathSync.native(current), ...missing.reverse());
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
export function tempDirs(): readonly string[] {
  const env = [process.env.TMPDIR, process.env.TMP, process.env.TEMP];
  const candidates = [...STATIC_TEMP_DIRS, tmpdir(), ...env].filter(
    (dir): dir is string => typeof dir === 'string' && dir.startsWith('/'),
  );
  return [...new Set(candidates.map(realpathOfNearest))].filter((dir) => dir !== '/');
}

/** The temp folder `path` lies in (after resolving symlinks), or undefined. */
export function tempDirContaining(path: string): string | undefined {
  const real = realpathOfNearest(path);
  return tempDirs().find((root) => real === root || real.startsWith(`${root}${sep}`));
}
