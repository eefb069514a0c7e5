/**
 * The file operations a patch needs (read, write, remove, create folders, metadata), so the
 * applier does not care where the files are. A local adapter uses `node:fs/promises`; a remote
 * one goes through the environment's backend.
 *
 * HACK: this is a stand-in until `Environment.fs` (readFile/writeFile/remove/createDirectory/
 * getMetadata with `{sandbox}`, local and remote) exists; `patchFileSystemFor` is the one switch.
 */

/** What {@link PatchFileSystem.getMetadata} reports. */
export interface PatchFileMetadata {
  readonly isFile: boolean;
  readonly isDirectory: boolean;
}

/** A file system seen through the sandbox a patch is applied with. Paths are absolute. */
export interface PatchFileSystem {
  readFile(path: string): Promise<Uint8Array>;
  writeFile(path: string, data: Uint8Array): Promise<void>;
  remove(path: string): Promise<void>;
  createDirectory(path: string, options: { readonly recursive: boolean }): Promise<void>;
  getMetadata(path: string): Promise<PatchFileMetadata>;
}

// glibc's strerror texts of the errors a patch can meet (what Rust's io::Error prints).
const ERRNO_TEXT: Readonly<Record<string, readonly [number, string]>> = {
  EPERM: [1, 'Operation not permitted'],
  ENOENT: [2, 'No such file or directory'],
  EIO: [5, 'Input/output error'],
  EACCES: [13, 'Permission denied'],
  EBUSY: [16, 'Device or resource busy'],
  EEXIST: [17, 'File exists'],
  EXDEV: [18, 'Invalid cross-device link'],
  ENOTDIR: [20, 'Not a directory'],
  EISDIR: [21, 'Is a directory'],
  EINVAL: [22, 'Invalid argument'],
  EFBIG: [27, 'File too large'],
  ENOSPC: [28, 'No space left on device'],
  EROFS: [30, 'Read-only file system'],
  ENAMETOOLONG: [36, 'File name too long'],
  ENOTEMPTY: [39, 'Directory not empty'],
  ELOOP: [40, 'Too many levels of symbolic links'],
};

/** A failed file operation; `message` is Rust's io::Error text (`No such file or directory (os error 2)`). */
export class PatchFsError extends Error {
  override name = 'PatchFsError';
  /** The errno name (`ENOENT`, …), or `EOTHER`. */
  readonly code: string;

  constructor(code: string, message?: string, options?: ErrorOptions) {
    const known = ERRNO_TEXT[code];
    super(message ?? (known === undefined ? code : `${known[1]} (os error ${known[0]})`), options);
    this.code = code;
  }

  /** Any thrown value as a PatchFsError (Node errors keep their errno name). */
  static from(error: unknown): PatchFsError {
    if (error instanceof PatchFsError) return error;
    const code = (error as { code?: unknown } | null)?.code;
    if (typeof code === 'string' && code in ERRNO_TEXT)
      return new PatchFsError(code, undefined, { cause: error });
    const text = error instanceof Error ? error.message : String(error);
    return new PatchFsError('EOTHER', text, { cause: error });
  }
}
