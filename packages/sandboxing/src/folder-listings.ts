import type { BigIntStats, Dirent } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * What the nested-repository scan needs from one folder: the sub-folders to descend into and
 * which of the watched names (`.git`, `.codex`, `.agents`) are there. Never what those entries
 * hold: a repository's own files are read afresh at every launch.
 */
export interface FolderListing {
  /** Names of the sub-folders (real folders, not symlinks), in listing order. */
  readonly folders: readonly string[];
  /** The watched names present, whatever their type. */
  readonly watched: readonly string[];
}

interface CachedListing extends FolderListing {
  readonly dev: bigint;
  readonly ino: bigint;
  readonly ctimeNs: bigint;
}

/**
 * A listing is reused while the folder's device, inode and change time are what they were.
 * Adding, removing or renaming an entry updates the change time, and so does resetting the
 * modification time (`touch -d` cannot hide a change: nothing but the clock sets ctime). A folder
 * changed less than this long before it was listed is listed again next time: file times are
 * taken from a coarse clock, and two changes within one tick would share a change time.
 */
const SETTLED_NS = 2_000_000_000n;

/** Listings kept at most (a few hundred bytes each); past it the cache starts over. */
const MAX_CACHED = 65_536;

const cache = new Map<string, CachedListing>();

/** `lstat`s one scan started ahead for the folders it will visit (see `prefetchFolders`). */
export type PrefetchedStats = Map<string, Promise<BigIntStats | undefined>>;

function statFolder(dir: string): Promise<BigIntStats | undefined> {
  return lstat(dir, { bigint: true }).catch(() => undefined);
}

/**
 * Starts the `lstat` of up to `limit` folders below `root` known from earlier listings (but those
 * named in `skipped`), all at once: a scan of an unchanged tree then waits for one round of the
 * thread pool instead of one per level. Only the scan that started them uses them (`listFolder`):
 * a scan that began later must not see a folder as it was before it began.
 */
export function prefetchFolders(root: string, limit: number, skipped: readonly string[]): PrefetchedStats {
  const ahead: PrefetchedStats = new Map();
  const queue = [root];
  for (let i = 0; i < queue.length && i < limit; i++) {
    const dir = queue[i]!;
    ahead.set(dir, statFolder(dir));
    const listing = cache.get(dir);
    if (listing === undefined) continue;
    for (const name of listing.folders) if (!skipped.includes(name)) queue.push(join(dir, name));
  }
  return ahead;
}

/**
 * The listing of `dir`, from the cache when the folder provably has not changed since it was
 * listed (one `lstat` instead of a `readdir`), else read and cached. Undefined when `dir` is not
 * a folder (gone, unreadable, or now a symlink: never followed).
 */
export async function listFolder(
  dir: string,
  watched: readonly string[],
  prefetched?: PrefetchedStats,
): Promise<FolderListing | undefined> {
  const startedNs = BigInt(Date.now()) * 1_000_000n;
  const ahead = prefetched?.get(dir);
  prefetched?.delete(dir);
  const info = await (ahead ?? statFolder(dir));
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
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    // Removed or made unreadable meanwhile: nothing to see there.
    cache.delete(dir);
    return undefined;
  }
  const folders: string[] = [];
  const present: string[] = [];
  for (const entry of entries) {
    if (watched.includes(entry.name)) present.push(entry.name);
    else if (entry.isDirectory()) folders.push(entry.name);
  }
  const listing: CachedListing = {
    folders,
    watched: present,
    dev: info.dev,
    ino: info.ino,
    ctimeNs: info.ctimeNs,
  };
  if (info.ctimeNs < startedNs - SETTLED_NS) {
    if (cache.size >= MAX_CACHED) cache.clear();
    cache.set(dir, listing);
  } else cache.delete(dir);
  return listing;
}

/** Forgets every cached listing (tests). */
export function clearFolderListings(): void {
  cache.clear();
}
