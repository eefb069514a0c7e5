import { rmdir } from 'node:fs/promises';

/**
 * Mount points this process had bubblewrap create for missing protected names (`.git`, `.codex`,
 * `.agents` in a project root), with how many running sandboxes use each. bubblewrap has to make
 * the empty folder on the host to mount over it; the last sandbox to finish removes it again, so
 * a workspace is left as it was found. While any sandbox still uses one, every new sandbox masks
 * it too (never binds it as an existing folder): removing a folder that is a mount point in
 * another sandbox detaches that mount, and the sandbox could then create the name.
 */
const holders = new Map<string, number>();

/** True when `path` is a placeholder some sandbox of this process still uses. */
export function isHeldPlaceholder(path: string): boolean {
  return holders.has(path);
}

/** Counts `paths` as used by one more sandbox; the returned release (idempotent) undoes it. */
export function holdPlaceholders(paths: readonly string[]): () => Promise<void> {
  for (const path of paths) holders.set(path, (holders.get(path) ?? 0) + 1);
  let released: Promise<void> | undefined;
  return () => {
    released ??= (async () => {
      for (const path of paths) {
        const count = (holders.get(path) ?? 1) - 1;
        if (count > 0) {
          holders.set(path, count);
          continue;
        }
        holders.delete(path);
        // Fails, harmlessly, when something was put there meanwhile (not empty) or it is gone.
        await rmdir(path).catch(() => {});
      }
    })();
    return released;
  };
}
