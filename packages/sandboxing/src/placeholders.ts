import { rmdirSync } from 'node:fs';
import { rmdir } from 'node:fs/promises';
import { ExecError } from '@execd/protocol';

/**
 * Mount points this process had bubblewrap create for missing protected names (`.git`, `.codex`,
 * `.agents` in a project root), with how many running sandboxes use each. bubblewrap has to make
 * the empty folder on the host to mount over it; the last sandbox to finish removes it again, so
 * a workspace is left as it was found. While any sandbox still uses one, every new sandbox masks
 * it too (never binds it as an existing folder): removing a folder that is a mount point in
 * another sandbox detaches that mount, and the sandbox could then create the name.
 */
const holders = new Map<string, number>();

/**
 * Placeholders no sandbox uses any more whose removal has not finished, with that removal. A CLI
 * that exits right after its last command ends (`process.exit` once the process closed) would
 * otherwise leave them behind: the `exit` hook removes what is left, synchronously (nothing async
 * runs then). A sandbox planned meanwhile masks the name and waits for the removal before it
 * starts: bubblewrap then makes a fresh mount point, which no late `rmdir` can detach.
 */
const removing = new Map<string, Promise<void>>();
let exitHookInstalled = false;

function removeLeftoversAtExit(): void {
  for (const path of removing.keys()) {
    if (holders.has(path)) continue;
    try {
      rmdirSync(path);
    } catch {
      // Not empty (something was put there) or gone: nothing to do.
    }
  }
}

/**
 * When each path's placeholder was last taken up or given back (first hold, last release,
 * removal done), on one clock for all paths. A planner that inspects the disk across an await
 * (`settledLook`) checks that the path it planned has no generation later than the clock when it
 * began: then what it saw was not a placeholder coming or going. Entries of idle paths are
 * dropped once there are many (a long-lived server masks names in every workspace it ever ran
 * in); a drop moves every path's generation on, so a comparison spanning it reads as a change
 * and the planner looks again.
 */
const generations = new Map<string, number>();
let clock = 0;
let prunedAt = 0;

/** Generations kept before the idle ones are dropped. */
const MAX_GENERATIONS = 4096;

function bump(path: string): void {
  clock += 1;
  generations.set(path, clock);
  if (generations.size <= MAX_GENERATIONS) return;
  for (const known of generations.keys()) {
    if (known !== path && !isPlaceholder(known)) generations.delete(known);
  }
  clock += 1;
  prunedAt = clock;
}

/** See `generations`. */
export function placeholderGeneration(path: string): number {
  return Math.max(generations.get(path) ?? 0, prunedAt);
}

/** Looks again at most this often while other sandboxes take up or give back a placeholder. */
const MAX_PLACEHOLDER_LOOKS = 16;

/**
 * Runs `look` (a planner's inspection of the disk, across awaits) until no placeholder of the
 * path it planned (`pathOf` its result; undefined: none) was taken up or given back while it
 * looked. Another sandbox's placeholder seen in passing would otherwise be planned as a user's
 * folder: bound without a hold, its owner's removal detaches the bind (or the mount fails).
 * Throws `spawnFailed` when it keeps changing.
 */
export async function settledLook<T>(
  look: () => Promise<T>,
  pathOf: (result: T) => string | undefined,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const since = clock;
    const result = await look();
    const path = pathOf(result);
    if (path === undefined || placeholderGeneration(path) <= since) return result;
    if (attempt >= MAX_PLACEHOLDER_LOOKS) {
      throw new ExecError('spawnFailed', `the sandbox placeholder ${path} kept changing; try again`);
    }
  }
}

/** How many generations are kept (tests). */
export function placeholderGenerationCount(): number {
  return generations.size;
}

/** True when `path` is a placeholder some sandbox of this process uses or is removing. */
export function isPlaceholder(path: string): boolean {
  return holders.has(path) || removing.has(path);
}

/** Resolves once no removal of any of `paths` is in flight (await it after holding them). */
export async function placeholderRemovals(paths: readonly string[]): Promise<void> {
  await Promise.all(paths.map((path) => removing.get(path)));
}

/** Counts `paths` as used by one more sandbox; the returned release (idempotent) undoes it. */
export function holdPlaceholders(paths: readonly string[]): () => Promise<void> {
  if (paths.length > 0 && !exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', removeLeftoversAtExit);
  }
  for (const path of paths) {
    const count = holders.get(path) ?? 0;
    if (count === 0) bump(path);
    holders.set(path, count + 1);
  }
  let released: Promise<void> | undefined;
  return () => {
    // Every path is counted down (and queued for removal) at once, before the first await, so
    // an exit right after the release started still finds them all in `removing`.
    released ??= Promise.all(
      paths.map(async (path) => {
        const count = (holders.get(path) ?? 1) - 1;
        if (count > 0) {
          holders.set(path, count);
          return;
        }
        holders.delete(path);
        bump(path);
        // Fails, harmlessly, when something was put there meanwhile (not empty) or it is gone.
        const removal = rmdir(path).then(
          () => undefined,
          () => undefined,
        );
        removing.set(path, removal);
        await removal;
        if (removing.get(path) === removal) {
          removing.delete(path);
          bump(path);
        }
      }),
    ).then(() => undefined);
    return released;
  };
}
