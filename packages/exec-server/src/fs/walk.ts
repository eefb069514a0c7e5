import { join } from 'node:path';
import type { FsWalkEntry, FsWalkError, FsWalkResponse } from '@execd/protocol';
import type { DirectoryEntry, FileMetadata, WalkOptions } from '@execd/protocol/contract';
import { refused } from './fs-errors.ts';

/** Deepest `maxDepth` (the original's `MAX_WALK_DEPTH`). */
export const WALK_MAX_DEPTH = 64;
/** Most directories one walk reads (the original's `MAX_WALK_DIRECTORIES`). */
export const WALK_MAX_DIRECTORIES = 10_000;
/** Most directory entries one walk looks at (the original's `MAX_WALK_ENTRIES`). */
export const WALK_MAX_ENTRIES = 50_000;
/** Budget of a walk's answer (the original's `MAX_WALK_RESPONSE_BYTES`): a bounded frame. */
export const WALK_MAX_RESPONSE_BYTES: number = 4 * 1024 * 1024;
/** What each listed path costs beyond its length (the original's per-item overhead). */
const WALK_ITEM_OVERHEAD_BYTES = 64;
/** `file://`, counted so the budget matches the original's, which measures URIs. */
const URI_PREFIX_BYTES = 7;

/** What a walk needs from a filesystem (so the walk itself stays free of I/O details). */
export interface WalkSource {
  readDirectory(path: string): Promise<DirectoryEntry[]>;
  getMetadata(path: string): Promise<FileMetadata>;
  canonicalize(path: string): Promise<string>;
}

/** Refuses limits outside the original's bounds, with its texts (-32600). */
export function checkWalkOptions(options: WalkOptions): void {
  if (options.maxDirectories === 0 || options.maxEntries === 0)
    throw refused('filesystem walk limits must be greater than zero');
  if (
    options.maxDepth > WALK_MAX_DEPTH ||
    options.maxDirectories > WALK_MAX_DIRECTORIES ||
    options.maxEntries > WALK_MAX_ENTRIES
  )
    throw refused(
      `filesystem walk limits exceed maximums: depth=${WALK_MAX_DEPTH}, directories=${WALK_MAX_DIRECTORIES}, entries=${WALK_MAX_ENTRIES}`,
    );
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The original's bounded breadth-first walk: each directory's entries sorted by name, every entry
 * counted against `maxEntries` (listed or not), symlinks listed only as directories and only when
 * followed, each real directory read once, errors of descendants collected, not thrown.
 */
export async function walkTree(
  source: WalkSource,
  root: string,
  options: WalkOptions,
): Promise<FsWalkResponse> {
  checkWalkOptions(options);
  const rootMetadata = await source.getMetadata(root);
  const outcome: { entries: FsWalkEntry[]; errors: FsWalkError[]; truncated: boolean } = {
    entries: [],
    errors: [],
    truncated: false,
  };
  const follow = options.followDirectorySymlinks;
  if (!rootMetadata.isDirectory || (rootMetadata.isSymlink && !follow)) return outcome;
  const visited = new Set([follow ? await source.canonicalize(root) : root]);
  const queue: [string, number][] = [[root, 0]];
  let directories = 1;
  let entriesSeen = 0;
  let responseBytes = 0;
  const reserve = (bytes: number): boolean => {
    const total = responseBytes + bytes + WALK_ITEM_OVERHEAD_BYTES;
    if (total > WALK_MAX_RESPONSE_BYTES) {
      outcome.truncated = true;
      return false;
    }
    responseBytes = total;
    return true;
  };
  const pushError = (path: string, error: unknown): boolean => {
    const text = message(error);
    if (!reserve(path.length + URI_PREFIX_BYTES + text.length)) return false;
    outcome.errors.push({ path, message: text });
    return true;
  };

  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    const [directory, depth] = next;
    let entries: DirectoryEntry[];
    try {
      entries = await source.readDirectory(directory);
    } catch (error) {
      if (!pushError(directory, error)) return outcome;
      continue;
    }
    entries.sort((left, right) =>
      left.fileName < right.fileName ? -1 : left.fileName > right.fileName ? 1 : 0,
    );
    for (const entry of entries) {
      if (entriesSeen === options.maxEntries) {
        outcome.truncated = true;
        return outcome;
      }
      entriesSeen += 1;
      const path = join(directory, entry.fileName);
      let metadata: FileMetadata;
      try {
        metadata = await source.getMetadata(path);
      } catch (error) {
        if (!pushError(path, error)) return outcome;
        continue;
      }
      if (metadata.isSymlink && (!follow || !metadata.isDirectory)) continue;
      const kind = metadata.isDirectory ? 'directory' : metadata.isFile ? 'file' : undefined;
      if (kind === undefined) continue;
      if (!reserve(path.length + URI_PREFIX_BYTES)) return outcome;
      outcome.entries.push({ path, kind });
      const prune = options.pruneHiddenDirectories === true && entry.fileName.startsWith('.');
      if (kind !== 'directory' || depth >= options.maxDepth || prune) continue;
      let identity = path;
      if (follow) {
        try {
          identity = await source.canonicalize(path);
        } catch (error) {
          if (!pushError(path, error)) return outcome;
          continue;
        }
      }
      if (visited.has(identity)) continue;
      visited.add(identity);
      if (directories === options.maxDirectories) outcome.truncated = true;
      else {
        directories += 1;
        queue.push([path, depth + 1]);
      }
    }
  }
  return outcome;
}
