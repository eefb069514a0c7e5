import { lstat, mkdir, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative } from 'node:path';
import { type PatchFileMetadata, type PatchFileSystem, PatchFsError } from './patch-fs.ts';

/** Where a sandboxed local patch may write: everywhere, or under these absolute roots. */
export type LocalWriteScope = 'all' | readonly string[];

/**
 * This machine's files through `node:fs/promises`. Writes (write, remove, create folder) are
 * confined to `scope` the way a sandbox confines them: by the real path, symlinks resolved, so a
 * link inside a root that points outside is refused (`EACCES`). Reads are not confined.
 */
export class LocalPatchFileSystem implements PatchFileSystem {
  readonly #scope: LocalWriteScope;

  constructor(scope: LocalWriteScope = 'all') {
    this.#scope = scope;
  }

  async readFile(path: string): Promise<Uint8Array> {
    try {
      return await readFile(path);
    } catch (error) {
      throw PatchFsError.from(error);
    }
  }

  async writeFile(path: string, data: Uint8Array): Promise<void> {
    await this.#checkWritable(path);
    try {
      await writeFile(path, data);
    } catch (error) {
      throw PatchFsError.from(error);
    }
  }

  async remove(path: string): Promise<void> {
    // The link itself is removed, not its target: confine by the folder that holds it.
    await this.#checkWritable(join(await this.#realFolder(dirname(path)), basename(path)), false);
    try {
      await rm(path);
    } catch (error) {
      throw PatchFsError.from(error);
    }
  }

  async createDirectory(path: string, options: { readonly recursive: boolean }): Promise<void> {
    // An existing folder needs no write (`mkdir -p` succeeds in a sandbox too).
    if (options.recursive && (await stat(path).catch(() => undefined))?.isDirectory()) return;
    await this.#checkWritable(path);
    try {
      await mkdir(path, { recursive: options.recursive });
    } catch (error) {
      throw PatchFsError.from(error);
    }
  }

  async getMetadata(path: string): Promise<PatchFileMetadata> {
    try {
      const stats = await stat(path);
      return { isFile: stats.isFile(), isDirectory: stats.isDirectory() };
    } catch (error) {
      throw PatchFsError.from(error);
    }
  }

  async #realFolder(path: string): Promise<string> {
    try {
      return await realpath(path);
    } catch {
      return path;
    }
  }

  // The real location `path` would be written at: its existing part resolved, the rest appended.
  async #realTarget(path: string, followLink: boolean): Promise<string> {
    let existing = path;
    const rest: string[] = [];
    for (;;) {
      try {
        if (!followLink && rest.length === 0) {
          await lstat(existing);
          return join(await realpath(dirname(existing)), basename(existing));
        }
        return join(await realpath(existing), ...rest.reverse());
      } catch (error) {
        if ((error as { code?: unknown }).code !== 'ENOENT') throw PatchFsError.from(error);
        // A dangling link would create its target wherever it points: refuse it.
        const link = await lstat(existing).catch(() => undefined);
        if (link?.isSymbolicLink()) throw new PatchFsError('EACCES');
        const parent = dirname(existing);
        if (parent === existing) return path;
        rest.push(basename(existing));
        existing = parent;
      }
    }
  }

  async #checkWritable(path: string, followLink = true): Promise<void> {
    if (this.#scope === 'all') return;
    const target = await this.#realTarget(path, followLink);
    for (const root of this.#scope) {
      const realRoot = await this.#realFolder(root);
      const inside = relative(realRoot, target);
      if (inside === '' || (inside !== '..' && !inside.startsWith('../') && !isAbsolute(inside))) return;
    }
    throw new PatchFsError('EACCES');
  }
}
