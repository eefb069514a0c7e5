import type { SandboxParam } from '@execd/protocol';
import { type PatchFileMetadata, type PatchFileSystem, PatchFsError } from './patch-fs.ts';

/** Per-call options of {@link ExecFileSystemLike} (the contract's `FsCallOptions`). */
interface FsOptions {
  readonly sandbox?: SandboxParam | undefined;
}

/**
 * The part of the executor filesystem contract (`ExecFileSystem` of `@execd/protocol/contract`,
 * local and remote) a patch uses; declared structurally so this file does not depend on the rest.
 */
export interface ExecFileSystemLike {
  readFile(path: string, options?: FsOptions): Promise<Uint8Array>;
  writeFile(path: string, data: Uint8Array, options?: FsOptions): Promise<void>;
  createDirectory(path: string, options?: FsOptions & { readonly recursive?: boolean }): Promise<void>;
  getMetadata(
    path: string,
    options?: FsOptions,
  ): Promise<{ readonly isFile: boolean; readonly isDirectory: boolean }>;
  remove(
    path: string,
    options?: FsOptions & { readonly recursive?: boolean; readonly force?: boolean },
  ): Promise<void>;
}

// errno numbers of the `(os error N)` texts the executor answers with.
const ERRNO_NAMES: Readonly<Record<number, string>> = {
  1: 'EPERM',
  2: 'ENOENT',
  13: 'EACCES',
  17: 'EEXIST',
  20: 'ENOTDIR',
  21: 'EISDIR',
  28: 'ENOSPC',
  30: 'EROFS',
  39: 'ENOTEMPTY',
  40: 'ELOOP',
};

function asPatchFsError(error: unknown): PatchFsError {
  const message = error instanceof Error ? error.message : String(error);
  const errno = /\(os error (\d+)\)$/.exec(message)?.[1];
  const code = errno === undefined ? 'EOTHER' : (ERRNO_NAMES[Number(errno)] ?? 'EOTHER');
  return new PatchFsError(code, message, { cause: error });
}

async function mapped<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw asPatchFsError(error);
  }
}

/**
 * A patch's view of an environment's filesystem (`Environment.fs`): reads unconfined (as the
 * original reads patch targets), writes under `sandbox` so the executor refuses what a sandboxed
 * command could not write (`Read-only file system (os error 30)`).
 */
export class ExecFileSystemPatchAdapter implements PatchFileSystem {
  readonly #fs: ExecFileSystemLike;
  readonly #sandbox: SandboxParam | undefined;

  constructor(fs: ExecFileSystemLike, sandbox: SandboxParam | undefined) {
    this.#fs = fs;
    this.#sandbox = sandbox;
  }

  readFile(path: string): Promise<Uint8Array> {
    return mapped(() => this.#fs.readFile(path));
  }

  writeFile(path: string, data: Uint8Array): Promise<void> {
    return mapped(() => this.#fs.writeFile(path, data, { sandbox: this.#sandbox }));
  }

  remove(path: string): Promise<void> {
    return mapped(() => this.#fs.remove(path, { sandbox: this.#sandbox, recursive: false, force: false }));
  }

  createDirectory(path: string, options: { readonly recursive: boolean }): Promise<void> {
    return mapped(() =>
      this.#fs.createDirectory(path, { sandbox: this.#sandbox, recursive: options.recursive }),
    );
  }

  async getMetadata(path: string): Promise<PatchFileMetadata> {
    const metadata = await mapped(() => this.#fs.getMetadata(path));
    return { isFile: metadata.isFile, isDirectory: metadata.isDirectory };
  }
}
