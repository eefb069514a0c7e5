import { lstat, realpath } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { SandboxParam } from '@execd/protocol';
import { type SandboxPathAccess, sandboxPathAccess } from '@execd/sandboxing';
import { notFoundError, osError } from './fs-errors.ts';

/** Resolves the `sandbox` param of one fs call into path checks (undefined: nothing is confined). */
export type PathAccessResolver = (sandbox: SandboxParam | undefined) => SandboxPathAccess | undefined;

/** The sandbox's own decision for each path (symlinks resolved, carve-outs and deny entries applied). */
export const defaultPathAccess: PathAccessResolver = (sandbox) => sandboxPathAccess(sandbox);

/**
 * The checks of one sandboxed fs call, with the answers the original's sandboxed helper gives:
 * a path the sandbox cannot see reads as missing (-32004), a visible one it may not write is
 * `Read-only file system (os error 30)` (-32603).
 */
export class FsGuard {
  readonly #access: SandboxPathAccess | undefined;

  constructor(access: SandboxPathAccess | undefined) {
    this.#access = access;
  }

  /** True when the call is confined. */
  get sandboxed(): boolean {
    return this.#access !== undefined;
  }

  /** Whether `path` is readable (true when unconfined). */
  async canRead(path: string): Promise<boolean> {
    return this.#access === undefined || (await this.#access.canRead(path));
  }

  /** Throws unless `path` (its target, when it is a symlink) may be read. */
  async read(path: string): Promise<void> {
    if (!(await this.canRead(path))) throw notFoundError();
  }

  /** Throws unless `path` (its target, when it is a symlink) may be written or created. */
  async write(path: string): Promise<void> {
    const access = this.#access;
    if (access === undefined || (await access.canWrite(path))) return;
    // As the kernel inside the sandbox: a target whose folder is missing or hidden is ENOENT.
    const target = await realpath(path).catch(async () => {
      const parent = await realpath(dirname(path)).catch(() => undefined);
      return parent === undefined ? undefined : join(parent, basename(path));
    });
    throw target !== undefined && (await access.canRead(dirname(target)))
      ? osError('EROFS')
      : notFoundError();
  }

  /** Throws unless the entry `path` itself may be removed (a symlink: its directory must be writable). */
  async writeEntry(path: string): Promise<void> {
    const access = this.#access;
    if (access === undefined) return;
    const isLink = await lstat(path).then(
      (stats) => stats.isSymbolicLink(),
      () => false,
    );
    if (!isLink) return this.write(path);
    const dir = dirname(path);
    if (await access.canWrite(dir)) return;
    throw (await access.canRead(dir)) ? osError('EROFS') : notFoundError();
  }
}
