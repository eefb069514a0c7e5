import { constants } from 'node:fs';
import { type FileHandle, lstat, open, stat } from 'node:fs/promises';
import type { FsOpenMode, FsReadBlockResponse } from '@execd/protocol';
import type { ExecFileHandle } from '@execd/protocol/contract';
import { FS_BLOCK_MAX_BYTES } from '@execd/protocol/contract';
import { fsCall, refused } from './fs-errors.ts';
import type { FsGuard } from './fs-sandbox.ts';

// O_NONBLOCK: opening a FIFO never waits for a peer (a read open returns at once, a write open
// fails with ENXIO), so no request can hang on a special file; regular files ignore the flag.
const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;
const REPLACE_FLAGS =
  constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NONBLOCK | constants.O_NOCTTY;

/** The original's refusal of a directory, FIFO, socket or device: ``path `X` is not a file`` (-32600). */
export function notAFile(path: string): Error {
  return refused(`path \`${path}\` is not a file`);
}

/** Refuses a block length outside 1..1 MiB, with the original's text (-32600). */
export function checkBlockLength(kind: 'read' | 'write', length: number): void {
  if (!Number.isSafeInteger(length) || length < 1 || length > FS_BLOCK_MAX_BYTES)
    throw refused(`file ${kind} block length must be between 1 and ${FS_BLOCK_MAX_BYTES}`);
}

/**
 * Opens a regular file without ever blocking: `read` refuses anything but a regular file;
 * `replace` creates or truncates (a directory is `Is a directory (os error 21)`, as the original;
 * a FIFO or device is refused instead of waiting for a reader).
 */
export async function openRegularFile(
  path: string,
  mode: FsOpenMode,
  guard: FsGuard,
  options: { readonly noFollow?: boolean } = {},
): Promise<FileHandle> {
  // No-follow (the original's `followSymlinks: false`): a final symlink fails the open with ELOOP.
  const noFollow = options.noFollow === true ? constants.O_NOFOLLOW : 0;
  const refuse = (): Error =>
    options.noFollow === true ? refused('path is not a regular file') : notAFile(path);
  if (mode === 'read') {
    await guard.read(path);
    const handle = await fsCall(() => open(path, READ_FLAGS | noFollow));
    try {
      const stats = await fsCall(() => handle.stat());
      if (!stats.isFile()) throw refuse();
      return handle;
    } catch (error) {
      await handle.close();
      throw error;
    }
  }
  await guard.write(path);
  const existing = await (noFollow === 0 ? stat(path) : lstat(path)).catch(() => undefined);
  const special = existing !== undefined && !existing.isFile() && !existing.isDirectory();
  if (special && !existing.isSymbolicLink()) throw refuse();
  return fsCall(() => open(path, REPLACE_FLAGS | noFollow, 0o666));
}

/** Reads up to `length` bytes at `offset` (fewer only at the end of the file). */
export async function readBlock(
  handle: FileHandle,
  offset: number,
  length: number,
): Promise<FsReadBlockResponse> {
  checkBlockLength('read', length);
  const buffer = new Uint8Array(length);
  let filled = 0;
  while (filled < length) {
    const position = offset + filled;
    const { bytesRead } = await fsCall(() => handle.read(buffer, filled, length - filled, position));
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return { chunk: filled === length ? buffer : buffer.subarray(0, filled), eof: filled < length };
}

/** Writes all of `chunk` at `offset`. */
export async function writeBlock(handle: FileHandle, offset: number, chunk: Uint8Array): Promise<void> {
  checkBlockLength('write', chunk.length);
  let written = 0;
  while (written < chunk.length) {
    const done = written;
    const { bytesWritten } = await fsCall(() =>
      handle.write(chunk, done, chunk.length - done, offset + done),
    );
    written += bytesWritten;
  }
}

/** An {@link ExecFileHandle} over a Node file handle (the in-process API). */
export class LocalFileHandle implements ExecFileHandle {
  readonly #handle: FileHandle;
  #closing: Promise<void> | undefined;

  constructor(handle: FileHandle) {
    this.#handle = handle;
  }

  read(offset: number, length: number): Promise<FsReadBlockResponse> {
    return readBlock(this.#handle, offset, length);
  }

  write(offset: number, chunk: Uint8Array): Promise<void> {
    return writeBlock(this.#handle, offset, chunk);
  }

  close(): Promise<void> {
    this.#closing ??= this.#handle.close().catch(() => undefined);
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
