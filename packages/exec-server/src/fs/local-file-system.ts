import type { Stats } from 'node:fs';
import { lstat, mkdir, opendir, realpath, rm, rmdir, stat, unlink } from 'node:fs/promises';
import { dirname, join, parse, sep } from 'node:path';
import type { FsOpenMode } from '@execd/protocol';
import type {
  DirectoryEntry,
  ExecFileHandle,
  ExecFileSystem,
  FileMetadata,
  FollowOption,
  FsCallOptions,
  MissingWatch,
  WalkOptions,
  WalkOutcome,
} from '@execd/protocol/contract';
import { copyPath } from './copy.ts';
import { fsCall, notFoundError, osError, refused } from './fs-errors.ts';
import { checkNativePath } from './fs-path.ts';
import { defaultPathAccess, FsGuard, type PathAccessResolver } from './fs-sandbox.ts';
import { watchMissingPaths } from './missing-watch.ts';
import { checkParentsNoFollow, createDirectoryNoFollow, removeNoFollow } from './no-follow.ts';
import { LocalFileHandle, openRegularFile, readBlock } from './open-file.ts';
import { checkWalkOptions, walkTree } from './walk.ts';

/** The original's `fs/readFile` limit (512 MiB): a larger file is refused with its text. */
export const FS_READ_FILE_LIMIT_BYTES: number = 512 * 1024 * 1024;
/**
 * The largest file `fs/readFile` returns: the original's limit. A response that large is a frame
 * of up to ~683 MiB in JSON; a client that cannot take it (execd's own stops at 64 MiB frames)
 * reads large files through `fs/open`/`fs/readBlock` instead (execd's `RemoteFileSystem` does).
 */
export const FS_READ_FILE_MAX_BYTES: number = FS_READ_FILE_LIMIT_BYTES;
/** Most bytes read per `read(2)` by `readFile` (and written per `write(2)` by `writeFile`). */
const READ_FILE_CHUNK_BYTES = 1024 * 1024;
/** Fewest bytes asked per read: files that report size 0 (`/proc`) are read in steps this big. */
const READ_FILE_MIN_READ_BYTES = 64 * 1024;

/** Options of {@link LocalFileSystem}. */
export interface LocalFileSystemOptions {
  /** Turns a call's `sandbox` into path checks (default: the sandbox's own rules, `sandboxPathAccess`). */
  readonly pathAccess?: PathAccessResolver | undefined;
}

function metadataOf(stats: Stats, isSymlink: boolean, createdAtMs: number): FileMetadata {
  return {
    isDirectory: stats.isDirectory(),
    isFile: stats.isFile(),
    isSymlink,
    size: stats.size,
    createdAtMs,
    modifiedAtMs: Math.floor(stats.mtimeMs),
  };
}

/**
 * The executor filesystem of this host: what the server's `fs/*` methods run and what
 * `Environment.local().fs` uses. Never blocks the event loop (all I/O is async; FIFOs and devices
 * are refused, never opened for a blocking read), reads are bounded, and with a `sandbox` every
 * path is checked as a command sandboxed that way would see it.
 */
export class LocalFileSystem implements ExecFileSystem {
  readonly #pathAccess: PathAccessResolver;

  constructor(options: LocalFileSystemOptions = {}) {
    this.#pathAccess = options.pathAccess ?? defaultPathAccess;
  }

  /** The checks of one call (exported to the server's handle table, which opens files itself). */
  guard(options: FsCallOptions | undefined): FsGuard {
    return new FsGuard(this.#pathAccess(options?.sandbox));
  }

  async readFile(path: string, options?: FsCallOptions & FollowOption): Promise<Uint8Array> {
    const file = checkNativePath(path);
    const noFollow = options?.followSymlinks === false;
    if (noFollow) await checkParentsNoFollow(file);
    const handle = await openRegularFile(file, 'read', this.guard(options), { noFollow });
    try {
      const { size } = await fsCall(() => handle.stat());
      const tooLarge = (): Error =>
        refused(`file is too large to read: limit is ${FS_READ_FILE_LIMIT_BYTES} bytes`);
      if (size > FS_READ_FILE_MAX_BYTES) throw tooLarge();
      // The size is a hint (a file may grow, /proc files report 0): read to the end, bounded.
      const chunks: Uint8Array[] = [];
      let total = 0;
      for (;;) {
        options?.cancelSignal?.throwIfAborted();
        const want = Math.min(READ_FILE_CHUNK_BYTES, Math.max(size - total + 1, READ_FILE_MIN_READ_BYTES));
        const { chunk, eof } = await readBlock(handle, total, want);
        total += chunk.length;
        if (total > FS_READ_FILE_MAX_BYTES) throw tooLarge();
        chunks.push(chunk);
        if (eof) break;
      }
      return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    } finally {
      await handle.close();
    }
  }

  async writeFile(path: string, data: Uint8Array, options?: FsCallOptions & FollowOption): Promise<void> {
    const file = checkNativePath(path);
    const noFollow = options?.followSymlinks === false;
    if (noFollow) await checkParentsNoFollow(file);
    const opened = await openRegularFile(file, 'replace', this.guard(options), { noFollow });
    const handle = new LocalFileHandle(opened);
    try {
      for (let offset = 0; offset < data.length; offset += READ_FILE_CHUNK_BYTES)
        await handle.write(offset, data.subarray(offset, offset + READ_FILE_CHUNK_BYTES));
    } finally {
      await handle.close();
    }
  }

  async createDirectory(
    path: string,
    options?: FsCallOptions & FollowOption & { readonly recursive?: boolean },
  ): Promise<void> {
    const dir = checkNativePath(path);
    const guard = this.guard(options);
    await guard.write(dir);
    const recursive = options?.recursive ?? true;
    if (options?.followSymlinks === false) await createDirectoryNoFollow(dir, recursive);
    else await fsCall(() => mkdir(dir, { recursive }));
  }

  async getMetadata(path: string, options?: FsCallOptions & FollowOption): Promise<FileMetadata> {
    const target = checkNativePath(path);
    await this.guard(options).read(target);
    if (options?.followSymlinks === false) return this.#metadataNoFollow(target);
    // One system call unless the path is a symlink: for anything else `lstat` is `stat`. Both
    // resolve the parents alike, so a missing or unreadable parent fails the same way.
    const entry = await fsCall(() => lstat(target));
    const isSymlink = entry.isSymbolicLink();
    const stats = isSymlink ? await fsCall(() => stat(target)) : entry;
    // The original reports no birth time on this path (`createdAtMs: 0`), only without following.
    return metadataOf(stats, isSymlink, 0);
  }

  /** No component may be a symlink: a parent one is `Not a directory`, the last one is refused. */
  async #metadataNoFollow(path: string): Promise<FileMetadata> {
    const { root } = parse(path);
    const parts = path.slice(root.length).split(sep).filter(Boolean);
    let current = root;
    for (const [index, part] of parts.entries()) {
      current = join(current, part);
      const stats = await fsCall(() => lstat(current));
      const last = index === parts.length - 1;
      if (stats.isSymbolicLink()) throw last ? refused('path contains a symbolic link') : osError('ENOTDIR');
      if (last) return metadataOf(stats, false, Math.floor(stats.birthtimeMs));
      if (!stats.isDirectory()) throw osError('ENOTDIR');
    }
    return metadataOf(await fsCall(() => lstat(root)), false, 0);
  }

  async canonicalize(path: string, options?: FsCallOptions): Promise<string> {
    const target = checkNativePath(path);
    await this.guard(options).read(target);
    return fsCall(() => realpath(target));
  }

  async readDirectory(path: string, options?: FsCallOptions): Promise<DirectoryEntry[]> {
    const dir = checkNativePath(path);
    const guard = this.guard(options);
    await guard.read(dir);
    const entries: DirectoryEntry[] = [];
    const handle = await fsCall(() => opendir(dir));
    for await (const entry of handle) {
      const child = join(dir, entry.name);
      // As the original: entries that cannot be stat'ed (dangling links, loops) are left out.
      const stats = entry.isSymbolicLink() ? await stat(child).catch(() => undefined) : undefined;
      if (entry.isSymbolicLink() && (stats === undefined || !(await guard.canRead(child)))) continue;
      entries.push({
        fileName: entry.name,
        isDirectory: stats?.isDirectory() ?? entry.isDirectory(),
        isFile: stats?.isFile() ?? entry.isFile(),
      });
    }
    return entries;
  }

  async walk(path: string, walkOptions: WalkOptions, options?: FsCallOptions): Promise<WalkOutcome> {
    const root = checkNativePath(path);
    // Bad limits are reported before anything about the root (as the original).
    checkWalkOptions(walkOptions);
    const guard = this.guard(options);
    await guard.read(root);
    return walkTree(
      {
        readDirectory: (dir) => this.readDirectory(dir, options),
        getMetadata: async (entry) => {
          const metadata = await this.getMetadata(entry);
          // A symlink the sandbox cannot follow is not listed (it reads as missing in there).
          if (metadata.isSymlink && !(await guard.canRead(entry))) throw notFoundError();
          return metadata;
        },
        canonicalize: (entry) => fsCall(() => realpath(entry)),
      },
      root,
      walkOptions,
    );
  }

  async remove(
    path: string,
    options?: FsCallOptions & FollowOption & { readonly recursive?: boolean; readonly force?: boolean },
  ): Promise<void> {
    const target = checkNativePath(path);
    const guard = this.guard(options);
    if (options?.followSymlinks === false) {
      const flags = { recursive: options.recursive ?? true, force: options.force ?? true };
      if (!flags.recursive) await guard.writeEntry(target);
      return removeNoFollow(target, flags);
    }
    let stats: Stats;
    try {
      await guard.read(dirname(target));
      stats = await fsCall(() => lstat(target));
    } catch (error) {
      if (options?.force !== false && (error as { code?: string }).code === 'notFound') return;
      throw error;
    }
    await guard.writeEntry(target);
    if (!stats.isDirectory()) await fsCall(() => unlink(target));
    else if (options?.recursive === false) await fsCall(() => rmdir(target));
    else await fsCall(() => rm(target, { recursive: true, force: false }));
  }

  async copy(
    sourcePath: string,
    destinationPath: string,
    options: FsCallOptions & { readonly recursive: boolean },
  ): Promise<void> {
    const source = checkNativePath(sourcePath);
    const destination = checkNativePath(destinationPath);
    const guard = this.guard(options);
    await guard.read(source);
    await guard.write(destination);
    await copyPath(source, destination, options.recursive);
  }

  async open(
    path: string,
    options?: FsCallOptions & { readonly mode?: FsOpenMode },
  ): Promise<ExecFileHandle> {
    const file = checkNativePath(path);
    return new LocalFileHandle(await openRegularFile(file, options?.mode ?? 'read', this.guard(options)));
  }

  async watchMissing(
    missing: readonly string[],
    options?: { readonly present?: string | undefined; readonly cancelSignal?: AbortSignal | undefined },
  ): Promise<MissingWatch> {
    const paths = missing.map((path) => checkNativePath(path));
    const present = options?.present === undefined ? undefined : checkNativePath(options.present);
    const watch = await watchMissingPaths(paths, present);
    options?.cancelSignal?.addEventListener('abort', () => void watch.close(), { once: true });
    return watch;
  }
}
