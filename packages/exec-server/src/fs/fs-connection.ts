import {
  decodeParams,
  type FsMissingChangedNotification,
  type FsWatchMissingParams,
  type Logger,
  NOOP_LOGGER,
  RpcError,
} from '@execd/protocol';
import type { MissingWatch } from '@execd/protocol/contract';
import { decodeBase64Strict } from './base64-text.ts';
import { FileHandleTable } from './file-handle-table.ts';
import { pathFromUri, uriFromPath } from './fs-path.ts';
import type { LocalFileSystem } from './local-file-system.ts';
import { openRegularFile } from './open-file.ts';

/** Options of {@link FsConnection}. */
export interface FsConnectionOptions {
  readonly fileSystem: LocalFileSystem;
  /** Sends `fs/missingChanged` to this connection's client. */
  readonly notify: (params: FsMissingChangedNotification) => void;
  readonly logger?: Logger | undefined;
}

/** True for the `fs/*` requests a client may send. */
export function isFsRequest(method: string): boolean {
  return method.startsWith('fs/') && method !== 'fs/missingChanged';
}

/**
 * The `fs/*` methods of one connection: URIs in and out, the connection's open handles and its
 * one missing-path watch (a new `fs/watchMissing` replaces it, as the original's). Everything is
 * released by {@link FsConnection.close} when the connection ends.
 */
export class FsConnection {
  readonly #fs: LocalFileSystem;
  readonly #notify: FsConnectionOptions['notify'];
  readonly #logger: Logger;
  readonly #handles = new FileHandleTable();
  #watch: MissingWatch | undefined;
  /** `fs/watchMissing` calls run one after the other (the last one wins). */
  #watchChain: Promise<unknown> = Promise.resolve();
  #closed = false;

  constructor(options: FsConnectionOptions) {
    this.#fs = options.fileSystem;
    this.#notify = options.notify;
    this.#logger = options.logger ?? NOOP_LOGGER;
  }

  /**
   * Runs one `fs/*` request. Params are validated first, then `ready()` checks the handshake
   * (the original's order); errors are `RpcError`s with the original's codes and texts.
   */
  async handle(method: string, raw: unknown, ready: () => void): Promise<unknown> {
    const fs = this.#fs;
    switch (method) {
      case 'fs/readFile': {
        const { path, followSymlinks, sandbox } = decodeParams(method, raw);
        const file = pathFromUri(path);
        ready();
        return { dataBase64: await fs.readFile(file, { sandbox, followSymlinks }) };
      }
      case 'fs/writeFile': {
        const { path, dataBase64, followSymlinks, sandbox } = decodeParams(method, raw);
        const file = pathFromUri(path);
        ready();
        const data = typeof dataBase64 === 'string' ? decodeBase64Strict(dataBase64, method) : dataBase64;
        await fs.writeFile(file, data, { sandbox, followSymlinks });
        return {};
      }
      case 'fs/createDirectory': {
        const { path, recursive, followSymlinks, sandbox } = decodeParams(method, raw);
        const dir = pathFromUri(path);
        ready();
        await fs.createDirectory(dir, {
          sandbox,
          followSymlinks,
          ...(recursive === undefined ? {} : { recursive }),
        });
        return {};
      }
      case 'fs/getMetadata': {
        const { path, followSymlinks, sandbox } = decodeParams(method, raw);
        const target = pathFromUri(path);
        ready();
        return fs.getMetadata(target, {
          sandbox,
          ...(followSymlinks === undefined ? {} : { followSymlinks }),
        });
      }
      case 'fs/canonicalize': {
        const { path, sandbox } = decodeParams(method, raw);
        const target = pathFromUri(path);
        ready();
        return { path: uriFromPath(await fs.canonicalize(target, { sandbox })) };
      }
      case 'fs/readDirectory': {
        const { path, sandbox } = decodeParams(method, raw);
        const dir = pathFromUri(path);
        ready();
        return { entries: await fs.readDirectory(dir, { sandbox }) };
      }
      case 'fs/walk': {
        const { path, options, sandbox } = decodeParams(method, raw);
        const root = pathFromUri(path);
        ready();
        const outcome = await fs.walk(root, options, { sandbox });
        return {
          entries: outcome.entries.map((entry) => ({ path: uriFromPath(entry.path), kind: entry.kind })),
          errors: outcome.errors.map((error) => ({ path: uriFromPath(error.path), message: error.message })),
          truncated: outcome.truncated,
        };
      }
      case 'fs/remove': {
        const { path, recursive, force, followSymlinks, sandbox } = decodeParams(method, raw);
        const target = pathFromUri(path);
        ready();
        await fs.remove(target, {
          sandbox,
          followSymlinks,
          ...(recursive === undefined ? {} : { recursive }),
          ...(force === undefined ? {} : { force }),
        });
        return {};
      }
      case 'fs/copy': {
        const { sourcePath, destinationPath, recursive, sandbox } = decodeParams(method, raw);
        const source = pathFromUri(sourcePath);
        const destination = pathFromUri(destinationPath);
        ready();
        await fs.copy(source, destination, { recursive, sandbox });
        return {};
      }
      case 'fs/open': {
        const { handleId, path, mode, sandbox } = decodeParams(method, raw);
        const file = pathFromUri(path);
        ready();
        await this.#handles.open(handleId, () =>
          openRegularFile(file, mode ?? 'read', fs.guard({ sandbox })),
        );
        return { handleId };
      }
      case 'fs/readBlock': {
        const { handleId, offset, len } = decodeParams(method, raw);
        ready();
        return this.#handles.read(handleId, offset, len);
      }
      case 'fs/writeBlock': {
        const { handleId, offset, chunk } = decodeParams(method, raw);
        ready();
        await this.#handles.write(handleId, offset, chunk);
        return {};
      }
      case 'fs/close': {
        const { handleId } = decodeParams(method, raw);
        ready();
        await this.#handles.close(handleId);
        return {};
      }
      case 'fs/watchMissing': {
        const params = decodeParams(method, raw);
        const missing = params.missing.map((uri) => pathFromUri(uri));
        const present = params.present === undefined ? undefined : pathFromUri(params.present);
        ready();
        const run = this.#watchChain.then(() => this.#watchMissing(params, missing, present));
        this.#watchChain = run.catch(() => undefined);
        return run;
      }
      default:
        throw new RpcError('methodNotFound', `exec-server stub does not implement \`${method}\` yet`);
    }
  }

  /** Open handles (for tests and metrics). */
  get openHandles(): number {
    return this.#handles.size;
  }

  /** Closes every handle and the watch. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    const watch = this.#watch;
    this.#watch = undefined;
    await Promise.all([this.#handles.closeAll(), watch?.close()]);
  }

  async #watchMissing(
    params: FsWatchMissingParams,
    missing: string[],
    present: string | undefined,
  ): Promise<{ watching: boolean }> {
    // Id 0 is refused and leaves the current watch alone; any other call replaces it.
    if (params.watchId === 0 || this.#closed) return { watching: false };
    const previous = this.#watch;
    this.#watch = undefined;
    await previous?.close();
    const watch = await this.#fs.watchMissing(missing, { present });
    if (!watch.watching) return { watching: false };
    if (this.#closed) {
      await watch.close();
      return { watching: false };
    }
    this.#watch = watch;
    void watch.ended.then((end) => {
      if (end !== 'changed' || this.#watch !== watch) return;
      this.#watch = undefined;
      this.#logger.debug('missing-path watch fired', { watchId: params.watchId });
      this.#notify({ watchId: params.watchId });
    });
    return { watching: true };
  }
}
