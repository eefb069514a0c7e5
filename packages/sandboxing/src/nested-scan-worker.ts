import type * as fs from 'node:fs';
import type * as path from 'node:path';
import type { MessagePort } from 'node:worker_threads';

/** What the scan is asked for: the roots in order, sharing one budget of folder visits. */
export interface NestedScanRequest {
  readonly id: number;
  readonly roots: readonly string[];
  /** Folders visited at most, across all roots. */
  readonly dirs: number;
  /** Deepest level below a root that is visited. */
  readonly maxDepth: number;
  /** Folder names never descended into (e.g. `node_modules`). */
  readonly skipped: readonly string[];
  /** Names reported wherever they are found below a root (`.git`, `.codex`, `.agents`). */
  readonly watched: readonly string[];
}

/** One root's answer: every watched name below it (not the root's own), breadth-first. */
export interface NestedRootScan {
  readonly found: readonly string[];
  /** The budget or the depth ran out before every folder was seen. */
  readonly truncated: boolean;
}

/** The worker's answer to one request (`error`: what stopped it, then no `roots`). */
export interface NestedScanReply {
  readonly id: number;
  readonly roots?: readonly NestedRootScan[];
  /** Folders read (`readdir`) in this scan: the others were answered from their listing. */
  readonly listed?: number;
  readonly error?: string;
}

/** Forget every listing (tests): answered with `{ id }` once done. */
export interface NestedScanClear {
  readonly id: number;
  readonly clear: true;
}

/**
 * The nested-name scan, run in a worker thread of its own (see `nested-scan.ts`): this function
 * is the worker's whole program, so it names no module binding (its text is what the worker runs:
 * the modules come in as arguments). Synchronous throughout, off the event loop: an unchanged
 * folder costs one `lstat` syscall (~2 us) here against ~5-15 us of the main thread for each
 * asynchronous one, and a tree of thousands of folders costs the main thread nothing.
 *
 * A folder's listing (its sub-folders and the watched names in it) is reused while its device,
 * inode and change time are what they were when it was listed. Adding, removing or renaming an
 * entry updates the change time, and so does resetting the modification time (`touch -d` cannot
 * hide a change: nothing but the clock sets ctime). A folder changed less than 2 s before it was
 * listed is listed again next time: file times come from a coarse clock, and two changes within
 * one tick would share a change time. Never what the watched entries hold: the main thread
 * resolves those afresh at every launch. Symlinks are never followed, nothing inside a watched
 * `.git` is listed, a folder that cannot be read is skipped.
 */
export function nestedScanWorker(files: typeof fs, paths: typeof path, port: MessagePort): void {
  const WORKER_THREAD_NAME = 'execd-fscan';
  try {
    // The thread's name in `top -H` and /proc (the test kit's leak check knows it by this name).
    files.writeFileSync('/proc/thread-self/comm', WORKER_THREAD_NAME);
  } catch {
    // Not Linux, or no /proc: unnamed.
  }
  /** A folder changed this recently when listed is listed again next time (see above). */
  const SETTLED_NS = 2_000_000_000n;
  /** Listings kept at most (a few hundred bytes each); past it the cache starts over. */
  const MAX_CACHED = 65_536;

  interface Listing {
    readonly dev: bigint;
    readonly ino: bigint;
    readonly ctimeNs: bigint;
    readonly folders: readonly string[];
    readonly watched: readonly string[];
    /** More sub-folders than the scan's whole budget: the rest were not kept (never cached). */
    readonly cut: boolean;
  }
  const cache = new Map<string, Listing>();
  let listed = 0;

  function listFolder(dir: string, watched: readonly string[], maxFolders: number): Listing | undefined {
    const startedNs = BigInt(Date.now()) * 1_000_000n;
    let info: fs.BigIntStats | undefined;
    try {
      info = files.lstatSync(dir, { bigint: true, throwIfNoEntry: false });
    } catch {
      info = undefined;
    }
    if (info === undefined || !info.isDirectory()) {
      cache.delete(dir);
      return undefined;
    }
    const cached = cache.get(dir);
    if (
      cached !== undefined &&
      cached.dev === info.dev &&
      cached.ino === info.ino &&
      cached.ctimeNs === info.ctimeNs
    )
      return cached;
    listed += 1;
    const folders: string[] = [];
    const present: string[] = [];
    let cut = false;
    // Entry by entry, keeping only what matters: a folder of a million files (a command can make
    // one in /tmp) costs time here, never memory.
    let handle: fs.Dir | undefined;
    try {
      handle = files.opendirSync(dir, { bufferSize: 256 });
      for (let entry = handle.readSync(); entry !== null; entry = handle.readSync()) {
        if (watched.includes(entry.name)) present.push(entry.name);
        else if (!entry.isDirectory()) continue;
        else if (folders.length < maxFolders) folders.push(entry.name);
        else cut = true;
      }
    } catch {
      // Removed or made unreadable meanwhile: nothing to see there.
      cache.delete(dir);
      return undefined;
    } finally {
      try {
        handle?.closeSync();
      } catch {
        // already closed
      }
    }
    const listing: Listing = {
      dev: info.dev,
      ino: info.ino,
      ctimeNs: info.ctimeNs,
      folders,
      watched: present,
      cut,
    };
    if (!cut && info.ctimeNs < startedNs - SETTLED_NS) {
      if (cache.size >= MAX_CACHED) cache.clear();
      cache.set(dir, listing);
    } else cache.delete(dir);
    return listing;
  }

  /** One root, breadth-first, spending `budget.dirs`. */
  function scanRoot(root: string, request: NestedScanRequest, budget: { dirs: number }): NestedRootScan {
    const found: string[] = [];
    let cut = false;
    let level = [root];
    for (let depth = 0; level.length > 0 && depth <= request.maxDepth; depth++) {
      const next: string[] = [];
      for (const dir of level) {
        // An unvisited folder is left (this one): the scan stopped early.
        if (budget.dirs <= 0) return { found, truncated: true };
        budget.dirs -= 1;
        const listing = listFolder(dir, request.watched, request.dirs);
        if (listing === undefined) continue;
        cut ||= listing.cut;
        // The root's own names are the caller's (placeholder rules); below it, each is reported.
        if (depth > 0) for (const name of listing.watched) found.push(paths.join(dir, name));
        for (const name of listing.folders) {
          if (request.skipped.includes(name)) continue;
          // No more than the budget left could ever be visited: the level below holds no more.
          if (next.length < budget.dirs) next.push(paths.join(dir, name));
          else cut = true;
        }
      }
      level = next;
    }
    return { found, truncated: cut || level.length > 0 };
  }

  port.on('message', (message: NestedScanRequest | NestedScanClear) => {
    if ('clear' in message) {
      cache.clear();
      port.postMessage({ id: message.id } satisfies NestedScanReply);
      return;
    }
    try {
      const budget = { dirs: message.dirs };
      listed = 0;
      const roots = message.roots.map((root) => scanRoot(root, message, budget));
      port.postMessage({ id: message.id, roots, listed } satisfies NestedScanReply);
    } catch (error) {
      port.postMessage({ id: message.id, error: String(error) } satisfies NestedScanReply);
    }
  });
}
