import * as v from 'valibot';
import { Bytes, opt, PathUri, UInt } from './common.ts';
import { SandboxParam } from './sandbox.ts';

// The executor filesystem (`fs/*`, spec §2.4a). Every path is a `file:` URI naming a path on the
// executor's host; `sandbox` (optional everywhere) makes the operation succeed only where a
// command sandboxed that way could do the same. Field names, defaults and limits are Codex
// 0.169.0's (probed live).

/** `fs/readFile` params. */
export const FsReadFileParams = v.object({
  path: PathUri,
  /** Default true. False: no component may be a symlink (a final one is `Symbolic link loop`). */
  followSymlinks: opt(v.boolean()),
  sandbox: opt(SandboxParam),
});
export type FsReadFileParams = v.InferOutput<typeof FsReadFileParams>;

/** `fs/readFile` result: the whole file (at most `FS_READ_FILE_MAX_BYTES`). */
export const FsReadFileResponse = v.object({
  /** The file's bytes (base64 on the JSON codec, `bin` on msgpack). */
  dataBase64: Bytes,
});
export type FsReadFileResponse = v.InferOutput<typeof FsReadFileResponse>;

/**
 * `fs/writeFile` params: creates or truncates the file (following a final symlink). The
 * original decodes `dataBase64` itself and answers bad base64 with -32600, so an undecodable
 * string is kept as a string here and refused by the handler.
 */
export const FsWriteFileParams = v.object({
  path: PathUri,
  /** The new contents. */
  dataBase64: v.union([Bytes, v.string()]),
  /** Default true. False: no component may be a symlink (a final one is `Symbolic link loop`). */
  followSymlinks: opt(v.boolean()),
  sandbox: opt(SandboxParam),
});
export type FsWriteFileParams = v.InferOutput<typeof FsWriteFileParams>;

/** `fs/createDirectory` params. */
export const FsCreateDirectoryParams = v.object({
  path: PathUri,
  /** Create missing parents and accept an existing directory (default true, as the original). */
  recursive: opt(v.boolean()),
  /** Default true. False: a symlink (or file) on the way is `Not a directory (os error 20)`. */
  followSymlinks: opt(v.boolean()),
  sandbox: opt(SandboxParam),
});
export type FsCreateDirectoryParams = v.InferOutput<typeof FsCreateDirectoryParams>;

/** `fs/getMetadata` params. */
export const FsGetMetadataParams = v.object({
  path: PathUri,
  /**
   * Default true: a final symlink is followed (and reported with `isSymlink: true`). With false
   * no component may be a symlink: a final one is -32600 `path contains a symbolic link`.
   */
  followSymlinks: opt(v.boolean()),
  sandbox: opt(SandboxParam),
});
export type FsGetMetadataParams = v.InferOutput<typeof FsGetMetadataParams>;

/** `fs/getMetadata` result. */
export const FsGetMetadataResponse = v.object({
  isDirectory: v.boolean(),
  isFile: v.boolean(),
  /** The path itself is a symlink (its target's kind and size are reported). */
  isSymlink: v.boolean(),
  /** Size in bytes. */
  size: UInt,
  /** Birth time in ms since the epoch; 0 when not reported (always, when symlinks are followed). */
  createdAtMs: v.number(),
  /** Modification time in ms since the epoch. */
  modifiedAtMs: v.number(),
});
export type FsGetMetadataResponse = v.InferOutput<typeof FsGetMetadataResponse>;

/** `fs/canonicalize` params. */
export const FsCanonicalizeParams = v.object({ path: PathUri, sandbox: opt(SandboxParam) });
export type FsCanonicalizeParams = v.InferOutput<typeof FsCanonicalizeParams>;

/** `fs/canonicalize` result: the absolute path with every symlink resolved. */
export const FsCanonicalizeResponse = v.object({ path: PathUri });
export type FsCanonicalizeResponse = v.InferOutput<typeof FsCanonicalizeResponse>;

/** `fs/readDirectory` params. */
export const FsReadDirectoryParams = v.object({ path: PathUri, sandbox: opt(SandboxParam) });
export type FsReadDirectoryParams = v.InferOutput<typeof FsReadDirectoryParams>;

/** One entry of `fs/readDirectory`; symlinks report their target's kind. */
export const FsReadDirectoryEntry = v.object({
  fileName: v.string(),
  isDirectory: v.boolean(),
  isFile: v.boolean(),
});
export type FsReadDirectoryEntry = v.InferOutput<typeof FsReadDirectoryEntry>;

/** `fs/readDirectory` result, in directory order; entries that cannot be stat'ed are left out. */
export const FsReadDirectoryResponse = v.object({ entries: v.array(FsReadDirectoryEntry) });
export type FsReadDirectoryResponse = v.InferOutput<typeof FsReadDirectoryResponse>;

/** Bounds of `fs/walk` (every field but `pruneHiddenDirectories` is required, as the original). */
export const FsWalkOptions = v.object({
  /** How deep to descend below the root: 0 lists the root's children only (at most 64). */
  maxDepth: UInt,
  /** Directories read, the root included (1..10000). */
  maxDirectories: UInt,
  /** Directory entries looked at, listed or not (1..50000). */
  maxEntries: UInt,
  /** List and descend into symlinks to directories (each real directory once). */
  followDirectorySymlinks: v.boolean(),
  /** List directories whose name starts with `.` but do not descend into them (default false). */
  pruneHiddenDirectories: opt(v.boolean()),
});
export type FsWalkOptions = v.InferOutput<typeof FsWalkOptions>;

/** `fs/walk` params: a breadth-first listing of the files and directories below `path`. */
export const FsWalkParams = v.object({ path: PathUri, options: FsWalkOptions, sandbox: opt(SandboxParam) });
export type FsWalkParams = v.InferOutput<typeof FsWalkParams>;

/** One listed path of `fs/walk`. */
export const FsWalkEntry = v.object({
  /** A `file:` URI on the wire (a native path in `ExecFileSystem`). */
  path: v.string(),
  kind: v.picklist(['directory', 'file']),
});
export type FsWalkEntry = v.InferOutput<typeof FsWalkEntry>;

/** A descendant that could not be read during `fs/walk`. */
export const FsWalkError = v.object({ path: v.string(), message: v.string() });
export type FsWalkError = v.InferOutput<typeof FsWalkError>;

/** `fs/walk` result: breadth-first, each directory's entries sorted by name. */
export const FsWalkResponse = v.object({
  entries: v.array(FsWalkEntry),
  errors: v.array(FsWalkError),
  /** A limit (depth excluded) cut the listing short. */
  truncated: v.boolean(),
});
export type FsWalkResponse = v.InferOutput<typeof FsWalkResponse>;

/** `fs/remove` params. */
export const FsRemoveParams = v.object({
  path: PathUri,
  /** Remove a directory with its contents (default true). A symlink is removed, never followed. */
  recursive: opt(v.boolean()),
  /** A missing path is not an error (default true). */
  force: opt(v.boolean()),
  /**
   * Default true. False needs `recursive: false` (else -32603 `recursive no-follow removal is
   * unsupported`); a symlink at the path is then refused, one on the way is `Not a directory`.
   */
  followSymlinks: opt(v.boolean()),
  sandbox: opt(SandboxParam),
});
export type FsRemoveParams = v.InferOutput<typeof FsRemoveParams>;

/** `fs/copy` params (`recursive` is required, as the original). Symlinks are copied as links. */
export const FsCopyParams = v.object({
  sourcePath: PathUri,
  destinationPath: PathUri,
  /** Required for a directory source. */
  recursive: v.boolean(),
  sandbox: opt(SandboxParam),
});
export type FsCopyParams = v.InferOutput<typeof FsCopyParams>;

/**
 * How `fs/open` opens: `read`, or `replace` (create or truncate now, then `fs/writeBlock`). Also
 * accepted as serde's externally tagged unit variant (`{"read": null}`).
 */
export const FsOpenMode = v.union(
  [
    v.picklist(['read', 'replace']),
    v.pipe(
      v.union([v.strictObject({ read: v.null() }), v.strictObject({ replace: v.null() })]),
      v.transform((mode) => ('read' in mode ? 'read' : 'replace') as 'read' | 'replace'),
    ),
  ],
  (issue) => `unknown variant \`${String(issue.input)}\`, expected \`read\` or \`replace\``,
);
export type FsOpenMode = v.InferOutput<typeof FsOpenMode>;

/** `fs/open` params. */
export const FsOpenParams = v.object({
  /** Caller-chosen id (at most 32 bytes), unique among the connection's open handles. */
  handleId: v.string(),
  path: PathUri,
  /** Default `read`. */
  mode: opt(FsOpenMode),
  sandbox: opt(SandboxParam),
});
export type FsOpenParams = v.InferOutput<typeof FsOpenParams>;

/** `fs/open` result. */
export const FsOpenResponse = v.object({ handleId: v.string() });
export type FsOpenResponse = v.InferOutput<typeof FsOpenResponse>;

/** `fs/readBlock` params: a positional read of at most `len` bytes (1..1 MiB). */
export const FsReadBlockParams = v.object({ handleId: v.string(), offset: UInt, len: UInt });
export type FsReadBlockParams = v.InferOutput<typeof FsReadBlockParams>;

/** `fs/readBlock` result. */
export const FsReadBlockResponse = v.object({
  chunk: Bytes,
  /** Fewer than `len` bytes were left at `offset`. */
  eof: v.boolean(),
});
export type FsReadBlockResponse = v.InferOutput<typeof FsReadBlockResponse>;

/** `fs/writeBlock` params: a positional write (1..1 MiB) through a `replace` handle. */
export const FsWriteBlockParams = v.object({ handleId: v.string(), offset: UInt, chunk: Bytes });
export type FsWriteBlockParams = v.InferOutput<typeof FsWriteBlockParams>;

/** `fs/close` params; closing an unknown handle succeeds. */
export const FsCloseParams = v.object({ handleId: v.string() });
export type FsCloseParams = v.InferOutput<typeof FsCloseParams>;

/**
 * `fs/watchMissing` params: the connection's one watch (a new one replaces it). It fires once,
 * with `fs/missingChanged`, when one of `missing` (or a parent on its way) appears, or when
 * `present` changes or goes away. `watchId` 0 is refused without touching the current watch.
 */
export const FsWatchMissingParams = v.object({
  watchId: UInt,
  /** Paths that do not exist now (at most 64). */
  missing: v.array(PathUri),
  /** A path that exists now, or null. */
  present: opt(PathUri),
});
export type FsWatchMissingParams = v.InferOutput<typeof FsWatchMissingParams>;

/** `fs/watchMissing` result: false when nothing is watched (a path already changed, or a bad request). */
export const FsWatchMissingResponse = v.object({ watching: v.boolean() });
export type FsWatchMissingResponse = v.InferOutput<typeof FsWatchMissingResponse>;

/** `fs/missingChanged` notification: the watch fired (and ended). */
export const FsMissingChangedNotification = v.object({ watchId: UInt });
export type FsMissingChangedNotification = v.InferOutput<typeof FsMissingChangedNotification>;
