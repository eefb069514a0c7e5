import { constants } from 'node:os';
import { ExecError, RpcError } from '@execd/protocol';

// The original is a musl build: its OS errors read as Rust formats them, `{strerror} (os error N)`
// with musl's texts ("Symbolic link loop", not glibc's "Too many levels of symbolic links").
const MUSL_TEXTS: Readonly<Record<string, string>> = {
  EPERM: 'Operation not permitted',
  ENOENT: 'No such file or directory',
  EINTR: 'Interrupted system call',
  EIO: 'I/O error',
  ENXIO: 'No such device or address',
  E2BIG: 'Argument list too long',
  EBADF: 'Bad file descriptor',
  EAGAIN: 'Resource temporarily unavailable',
  ENOMEM: 'Out of memory',
  EACCES: 'Permission denied',
  EFAULT: 'Bad address',
  EBUSY: 'Resource busy',
  EEXIST: 'File exists',
  EXDEV: 'Cross-device link',
  ENODEV: 'No such device',
  ENOTDIR: 'Not a directory',
  EISDIR: 'Is a directory',
  EINVAL: 'Invalid argument',
  ENFILE: 'Too many open files in system',
  EMFILE: 'No file descriptors available',
  ETXTBSY: 'Text file busy',
  EFBIG: 'File too large',
  ENOSPC: 'No space left on device',
  ESPIPE: 'Invalid seek',
  EROFS: 'Read-only file system',
  EMLINK: 'Too many links',
  EPIPE: 'Broken pipe',
  ENAMETOOLONG: 'Filename too long',
  ELOOP: 'Symbolic link loop',
  ENOTEMPTY: 'Directory not empty',
  EOVERFLOW: 'Value too large for data type',
  EDQUOT: 'Quota exceeded',
  ESTALE: 'Stale file handle',
  ECANCELED: 'Operation canceled',
  ENOSYS: 'Function not implemented',
  EOPNOTSUPP: 'Not supported',
};

/** An OS error in the original's text: `No such file or directory (os error 2)`. */
export function osErrorText(code: string): string {
  const errno = (constants.errno as Record<string, number | undefined>)[code];
  const text = MUSL_TEXTS[code] ?? code;
  return errno === undefined ? text : `${text} (os error ${errno})`;
}

/** The original's answer to an OS error: -32004 for a missing path, -32603 for the others. */
export function osError(code: string, cause?: unknown): RpcError {
  return new RpcError(code === 'ENOENT' ? 'notFound' : 'internal', osErrorText(code), { cause });
}

/** `No such file or directory (os error 2)` (-32004): a missing path, or one a sandbox hides. */
export function notFoundError(): RpcError {
  return osError('ENOENT');
}

/** -32600 with a message: what the original answers for its own `InvalidInput` errors. */
export function refused(message: string): RpcError {
  return new RpcError('invalidRequest', message);
}

/** The error code of a Node fs error (`ENOENT`), or undefined for anything else. */
export function errnoCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) ? code : undefined;
}

/** Maps anything an fs call threw to the `RpcError` the original would answer. */
export function toFsError(error: unknown): ExecError {
  if (ExecError.is(error)) return error;
  const code = errnoCode(error);
  if (code !== undefined) return osError(code, error);
  const message = error instanceof Error ? error.message : String(error);
  return new RpcError('internal', message, { cause: error });
}

/** Runs `operation`, turning Node fs errors into the original's `RpcError`s. */
export async function fsCall<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw toFsError(error);
  }
}
