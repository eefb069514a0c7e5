import { type FSWatcher, watch } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { MissingWatch, MissingWatchEnd } from '@execd/protocol/contract';

/** Most paths one watch takes (the original answers `watching: false` beyond 64). */
export const WATCH_MISSING_MAX_PATHS = 64;

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

/** True when `path` is missing (ENOENT): a path under a file (ENOTDIR) does not count. */
async function isMissing(path: string): Promise<boolean> {
  return lstat(path).then(
    () => false,
    (error: { code?: string }) => error.code === 'ENOENT',
  );
}

/** The nearest existing ancestor directory of a missing path, and the name below it on the way. */
async function watchPoint(path: string): Promise<[string, string] | undefined> {
  let child = path;
  for (let dir = dirname(path); ; child = dir, dir = dirname(dir)) {
    const stats = await lstat(dir).catch(() => undefined);
    if (stats?.isDirectory()) return [dir, basename(child)];
    if (stats !== undefined || dir === dirname(dir)) return undefined;
  }
}

/**
 * One `fs/watchMissing` watch: inotify on the nearest existing parent of each missing path (a
 * name on the way to it appearing fires) and on the parent of `present` (any event on it fires).
 * It fires at most once, then releases its watchers.
 */
class LocalMissingWatch implements MissingWatch {
  readonly watching = true;
  readonly ended: Promise<MissingWatchEnd>;
  readonly #watchers: FSWatcher[] = [];
  #settle: (end: MissingWatchEnd) => void = () => undefined;
  #done = false;

  constructor() {
    this.ended = new Promise((resolve) => {
      this.#settle = resolve;
    });
  }

  /** Watches `names` in `dir`; returns false when inotify refuses (no watch then). */
  add(dir: string, names: ReadonlySet<string>): boolean {
    try {
      const watcher = watch(dir, { persistent: false }, (_event, filename) => {
        if (filename === null || names.has(filename.toString())) this.end('changed');
      });
      watcher.on('error', () => this.end('changed'));
      this.#watchers.push(watcher);
      return true;
    } catch {
      return false;
    }
  }

  end(end: MissingWatchEnd): void {
    if (this.#done) return;
    this.#done = true;
    for (const watcher of this.#watchers.splice(0)) watcher.close();
    this.#settle(end);
  }

  close(): Promise<void> {
    this.end('closed');
    return Promise.resolve();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/** A watch that watches nothing: `ended` is already `'changed'` (re-check and watch again). */
export function notWatching(): MissingWatch {
  const close = (): Promise<void> => Promise.resolve();
  return { watching: false, ended: Promise.resolve('changed'), close, [Symbol.asyncDispose]: close };
}

/**
 * Starts a watch, or answers {@link notWatching} as the original does: nothing to watch, too
 * many paths, `present` missing, a "missing" path that exists (or cannot exist), or no inotify.
 */
export async function watchMissingPaths(missing: readonly string[], present?: string): Promise<MissingWatch> {
  if (missing.length === 0 || missing.length > WATCH_MISSING_MAX_PATHS) return notWatching();
  if (present !== undefined && !(await exists(present))) return notWatching();
  const byDirectory = new Map<string, Set<string>>();
  const want = (dir: string, name: string): void => {
    const names = byDirectory.get(dir) ?? new Set();
    names.add(name);
    byDirectory.set(dir, names);
  };
  for (const path of missing) {
    if (!(await isMissing(path))) return notWatching();
    const point = await watchPoint(path);
    if (point === undefined) return notWatching();
    want(point[0], point[1]);
  }
  if (present !== undefined && dirname(present) !== present) want(dirname(present), basename(present));
  const result = new LocalMissingWatch();
  for (const [dir, names] of byDirectory) {
    if (!result.add(dir, names)) {
      result.end('closed');
      return notWatching();
    }
  }
  // A change between the checks above and the watchers starting would be missed: look again.
  const changed =
    (present !== undefined && !(await exists(present))) ||
    (await Promise.all(missing.map((path) => isMissing(path)))).some((still) => !still);
  if (changed) result.end('changed');
  return result;
}
