import { readdir, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { errnoCode, osErrorText } from '../fs/fs-errors.ts';

/** Limits of one scan (the original's for capability roots). */
export interface ScanLimits {
  /** Folders deeper than this below the root are not listed (the root is depth 0; the original lists depth 6). */
  readonly maxDepth: number;
  readonly maxDirectories: number;
  readonly maxEntries: number;
}

/** What a scan found: every regular file (symlinks followed), the folders it could not list. */
export interface ScanResult {
  readonly files: string[];
  readonly errors: { readonly path: string; readonly message: string }[];
  /** A limit was reached: some of the tree was not looked at. */
  readonly truncated: boolean;
}

/** The original's text of an OS error, e.g. `Permission denied (os error 13)`. */
export function ioErrorText(error: unknown): string {
  const code = errnoCode(error);
  return code === undefined ? String((error as Error)?.message ?? error) : osErrorText(code);
}

/**
 * Walks `root` breadth-first, following symlinks to folders (each real folder once, so a link
 * loop ends), hidden folders included, within `limits`. Never throws: an unreadable folder is an
 * entry of `errors`.
 */
export async function scanTree(root: string, limits: ScanLimits): Promise<ScanResult> {
  const files: string[] = [];
  const errors: ScanResult['errors'] = [];
  const seen = new Set<string>();
  let truncated = false;
  let directories = 0;
  let entries = 0;
  let level: string[] = [root];
  for (let depth = 0; depth <= limits.maxDepth && level.length > 0 && !truncated; depth++) {
    const next: string[] = [];
    for (const dir of level) {
      const real = await realpath(dir).catch(() => dir);
      if (seen.has(real)) continue;
      seen.add(real);
      if (++directories > limits.maxDirectories) {
        truncated = true;
        break;
      }
      let names: string[];
      try {
        names = (await readdir(dir)).sort();
      } catch (error) {
        errors.push({ path: dir, message: ioErrorText(error) });
        continue;
      }
      for (const name of names) {
        if (++entries > limits.maxEntries) {
          truncated = true;
          break;
        }
        const path = join(dir, name);
        const info = await stat(path).catch(() => undefined);
        if (info?.isDirectory()) next.push(path);
        else if (info?.isFile()) files.push(path);
      }
      if (truncated) break;
    }
    level = next;
  }
  return { files, errors, truncated };
}
