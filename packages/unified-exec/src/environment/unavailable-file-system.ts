import { ExecError } from '@execd/protocol';
import type { ExecFileSystem } from '@execd/protocol/contract';

/**
 * The filesystem of a remote environment whose backend is not an exec-server connection (a
 * custom `ExecBackend`): every call rejects with ExecError `unsupported`.
 */
export function unavailableFileSystem(): ExecFileSystem {
  const fail = (): Promise<never> =>
    Promise.reject(new ExecError('unsupported', 'this environment has no executor filesystem'));
  return {
    readFile: fail,
    writeFile: fail,
    createDirectory: fail,
    getMetadata: fail,
    canonicalize: fail,
    readDirectory: fail,
    walk: fail,
    remove: fail,
    copy: fail,
    open: fail,
    watchMissing: fail,
  };
}
