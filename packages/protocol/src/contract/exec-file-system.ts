import type {
  FsGetMetadataResponse,
  FsOpenMode,
  FsReadBlockResponse,
  FsReadDirectoryEntry,
  FsWalkOptions,
  FsWalkResponse,
} from '../schemas/fs.ts';
import type { SandboxParam } from '../schemas/sandbox.ts';

/** Options every {@link ExecFileSystem} operation takes. */
export interface FsCallOptions {
  /**
   * Succeed only where a command sandboxed this way could do the same: a denied write fails with
   * `Read-only file system (os error 30)` (-32603), an unreadable path reads as missing (-32004).
   */
  readonly sandbox?: SandboxParam | undefined;
  /** Abandons the call (a remote call stops waiting; the server may still finish it). */
  readonly cancelSignal?: AbortSignal | undefined;
}

/**
 * `followSymlinks` (default true). False: no component of the path may be a symlink (the
 * original's no-follow mode, with its errors: a final symlink is `Symbolic link loop (os error
 * 40)` for reads and writes, -32600 `path contains a symbolic link` for metadata and removal; one
 * on the way is `Not a directory (os error 20)`).
 */
export interface FollowOption {
  readonly followSymlinks?: boolean | undefined;
}

/** Metadata of a path (`fs/getMetadata`). */
export type FileMetadata = FsGetMetadataResponse;
/** One entry of a directory listing (`fs/readDirectory`). */
export type DirectoryEntry = FsReadDirectoryEntry;
/** Bounds of {@link ExecFileSystem.walk}. */
export type WalkOptions = FsWalkOptions;
/** Result of {@link ExecFileSystem.walk}; its paths are native absolute paths. */
export type WalkOutcome = FsWalkResponse;

/** An open file of {@link ExecFileSystem.open}: positional reads or writes, then `close()`. */
export interface ExecFileHandle extends AsyncDisposable {
  /** Reads at most `length` bytes (1..1 MiB) at `offset`; `eof` when fewer were left. */
  read(offset: number, length: number): Promise<FsReadBlockResponse>;
  /** Writes `chunk` (1..1 MiB) at `offset` (a `replace` handle only). */
  write(offset: number, chunk: Uint8Array): Promise<void>;
  /** Releases the handle. Idempotent. */
  close(): Promise<void>;
}

/** How a {@link MissingWatch} ended: a watched path changed, it was closed, or a newer watch replaced it. */
export type MissingWatchEnd = 'changed' | 'closed' | 'superseded';

/** A watch of {@link ExecFileSystem.watchMissing}; it fires at most once. */
export interface MissingWatch extends AsyncDisposable {
  /** False when nothing is watched (a path already changed); `ended` is then already `'changed'`. */
  readonly watching: boolean;
  /** Settles once: `'changed'` when a missing path (or a parent on its way) appeared or `present` changed. */
  readonly ended: Promise<MissingWatchEnd>;
  /** Stops watching (`ended` settles with `'closed'` unless it already settled). Idempotent. */
  close(): Promise<void>;
}

/**
 * The executor's filesystem (the original's `ExecutorFileSystem`): implemented in-process by
 * exec-server's `LocalFileSystem` (the same code that answers `fs/*`) and over the wire by
 * exec-client's `RemoteFileSystem`. Paths are native absolute paths; errors are `RpcError`s with
 * the original's codes and texts (-32004 missing, -32600 refused, -32603 other OS errors).
 */
export interface ExecFileSystem {
  /** The whole file (refused above the read limit: stream it with {@link ExecFileSystem.open}). */
  readFile(path: string, options?: FsCallOptions & FollowOption): Promise<Uint8Array>;
  /** Creates or truncates the file (a final symlink is followed unless `followSymlinks: false`). */
  writeFile(path: string, data: Uint8Array, options?: FsCallOptions & FollowOption): Promise<void>;
  /** `recursive` (default true) creates parents and accepts an existing directory. */
  createDirectory(
    path: string,
    options?: FsCallOptions & FollowOption & { readonly recursive?: boolean },
  ): Promise<void>;
  /** A final symlink is followed (and reported with `isSymlink: true`) unless `followSymlinks: false`. */
  getMetadata(path: string, options?: FsCallOptions & FollowOption): Promise<FileMetadata>;
  /** The path with every symlink resolved. */
  canonicalize(path: string, options?: FsCallOptions): Promise<string>;
  /** The directory's entries, in directory order. */
  readDirectory(path: string, options?: FsCallOptions): Promise<DirectoryEntry[]>;
  /** A bounded breadth-first listing of files and directories below `path`. */
  walk(path: string, walkOptions: WalkOptions, options?: FsCallOptions): Promise<WalkOutcome>;
  /** `recursive` and `force` default to true; a symlink is removed, never followed. */
  remove(
    path: string,
    options?: FsCallOptions & FollowOption & { readonly recursive?: boolean; readonly force?: boolean },
  ): Promise<void>;
  /** Copies a file, a symlink (as a link) or, with `recursive`, a directory tree. */
  copy(
    sourcePath: string,
    destinationPath: string,
    options: FsCallOptions & { readonly recursive: boolean },
  ): Promise<void>;
  /** Opens a regular file for positional reads (`read`, default) or writes (`replace` truncates now). */
  open(path: string, options?: FsCallOptions & { readonly mode?: FsOpenMode }): Promise<ExecFileHandle>;
  /** Watches `missing` paths to appear and `present` to change; see {@link MissingWatch}. */
  watchMissing(
    missing: readonly string[],
    options?: { readonly present?: string | undefined; readonly cancelSignal?: AbortSignal | undefined },
  ): Promise<MissingWatch>;
}

/** Largest `fs/readBlock`/`fs/writeBlock` length (the original's 1 MiB). */
export const FS_BLOCK_MAX_BYTES = 1024 * 1024;

/** Reads a file as a stream of chunks of at most `chunkBytes` (default 1 MiB) through {@link ExecFileSystem.open}. */
export async function* readFileChunks(
  fs: ExecFileSystem,
  path: string,
  options: FsCallOptions & { readonly chunkBytes?: number } = {},
): AsyncGenerator<Uint8Array> {
  const chunkBytes = options.chunkBytes ?? FS_BLOCK_MAX_BYTES;
  const handle = await fs.open(path, { sandbox: options.sandbox, cancelSignal: options.cancelSignal });
  try {
    for (let offset = 0; ; ) {
      options.cancelSignal?.throwIfAborted();
      const { chunk, eof } = await handle.read(offset, chunkBytes);
      if (chunk.length > 0) yield chunk;
      offset += chunk.length;
      if (eof) return;
    }
  } finally {
    await handle.close();
  }
}
