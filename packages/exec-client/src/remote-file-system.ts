import { type FsOpenMode, type FsReadBlockResponse, fileUriToPath, pathToFileUri } from '@execd/protocol';
import type {
  DirectoryEntry,
  ExecFileHandle,
  ExecFileSystem,
  FileMetadata,
  FollowOption,
  FsCallOptions,
  MissingWatch,
  MissingWatchEnd,
  WalkOptions,
  WalkOutcome,
} from '@execd/protocol/contract';
import { readFileChunks } from '@execd/protocol/contract';
import type { ExecServerClient } from './exec-server-client.ts';

/**
 * Largest file read with one `fs/readFile`: its base64 response stays under the 64 MiB frame
 * limit of this client's codecs (`MAX_FRAME_BYTES`), with room for the envelope.
 */
const ONE_FRAME_READ_BYTES = 32 * 1024 * 1024;

/** Distinguishes the handle ids of several RemoteFileSystems on one connection. */
let instances = 0;

/** Call options: idempotent requests are sent again after a resumed session. */
function call(options: FsCallOptions | undefined, retry: boolean) {
  return { retry, cancelSignal: options?.cancelSignal };
}

/** A handle of `fs/open` on the server (handles belong to the connection: a reconnect loses them). */
class RemoteFileHandle implements ExecFileHandle {
  readonly #client: ExecServerClient;
  readonly #handleId: string;
  #closing: Promise<void> | undefined;

  constructor(client: ExecServerClient, handleId: string) {
    this.#client = client;
    this.#handleId = handleId;
  }

  read(offset: number, length: number): Promise<FsReadBlockResponse> {
    return this.#client.request(
      'fs/readBlock',
      { handleId: this.#handleId, offset, len: length },
      { retry: false },
    );
  }

  async write(offset: number, chunk: Uint8Array): Promise<void> {
    await this.#client.request(
      'fs/writeBlock',
      { handleId: this.#handleId, offset, chunk },
      { retry: false },
    );
  }

  close(): Promise<void> {
    this.#closing ??= this.#client.request('fs/close', { handleId: this.#handleId }, { retry: false }).then(
      () => undefined,
      () => undefined,
    );
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/** The server-side watch of a connection, as seen from here. */
class RemoteMissingWatch implements MissingWatch {
  readonly watching = true;
  readonly ended: Promise<MissingWatchEnd>;
  readonly watchId: number;
  #settle: (end: MissingWatchEnd) => void = () => undefined;
  #done = false;
  readonly #cancel: () => Promise<void>;

  constructor(watchId: number, cancel: () => Promise<void>) {
    this.watchId = watchId;
    this.#cancel = cancel;
    this.ended = new Promise((resolve) => {
      this.#settle = resolve;
    });
  }

  get done(): boolean {
    return this.#done;
  }

  end(end: MissingWatchEnd): void {
    if (this.#done) return;
    this.#done = true;
    this.#settle(end);
  }

  async close(): Promise<void> {
    if (this.#done) return;
    this.end('closed');
    await this.#cancel();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/**
 * `ExecFileSystem` over an exec-server connection (the original's `RemoteFileSystem`): each call
 * is one `fs/*` request, paths travel as `file:` URIs. Idempotent requests survive a resumed
 * session; open handles and the watch do not (the server ties them to the connection): a
 * resumed session ends the watch with `'changed'`, so its owner looks again.
 */
export class RemoteFileSystem implements ExecFileSystem, Disposable {
  readonly #client: ExecServerClient;
  readonly #prefix = `r${++instances}-`;
  #nextHandle = 0;
  #nextWatch = 0;
  /** The connection holds one watch: a newer one supersedes it. */
  #watch: RemoteMissingWatch | undefined;
  readonly #subscriptions: Disposable[];

  constructor(client: ExecServerClient) {
    this.#client = client;
    this.#subscriptions = [
      client.onMissingChanged((watchId) => {
        if (this.#watch?.watchId === watchId) this.#takeWatch()?.end('changed');
      }),
      client.onStateChange((state) => {
        if (state !== 'ready') this.#takeWatch()?.end(state === 'recovering' ? 'changed' : 'closed');
      }),
    ];
  }

  /** Stops listening to the client (its watch, if any, ends with `'closed'`). Idempotent. */
  [Symbol.dispose](): void {
    for (const subscription of this.#subscriptions.splice(0)) subscription[Symbol.dispose]();
    this.#takeWatch()?.end('closed');
  }

  /**
   * The whole file. A file larger than {@link ONE_FRAME_READ_BYTES} (its response would not fit the
   * 64 MiB frames this client accepts) is read through `fs/open`/`fs/readBlock`, 1 MiB at a time.
   */
  async readFile(path: string, options?: FsCallOptions & FollowOption): Promise<Uint8Array> {
    const params = {
      path: pathToFileUri(path),
      followSymlinks: options?.followSymlinks,
      sandbox: options?.sandbox,
    };
    const { isFile, size } = await this.getMetadata(path, options);
    if (!isFile || size <= ONE_FRAME_READ_BYTES) {
      return (await this.#client.request('fs/readFile', params, call(options, true)))
        .dataBase64 as Uint8Array;
    }
    const chunks: Uint8Array[] = [];
    for await (const chunk of readFileChunks(this, path, options ?? {})) chunks.push(chunk);
    return Buffer.concat(chunks);
  }

  async writeFile(path: string, data: Uint8Array, options?: FsCallOptions & FollowOption): Promise<void> {
    const params = {
      path: pathToFileUri(path),
      dataBase64: data,
      followSymlinks: options?.followSymlinks,
      sandbox: options?.sandbox,
    };
    await this.#client.request('fs/writeFile', params, call(options, true));
  }

  async createDirectory(
    path: string,
    options?: FsCallOptions & FollowOption & { readonly recursive?: boolean },
  ): Promise<void> {
    const params = {
      path: pathToFileUri(path),
      recursive: options?.recursive,
      followSymlinks: options?.followSymlinks,
      sandbox: options?.sandbox,
    };
    await this.#client.request('fs/createDirectory', params, call(options, options?.recursive !== false));
  }

  getMetadata(path: string, options?: FsCallOptions & FollowOption): Promise<FileMetadata> {
    const params = {
      path: pathToFileUri(path),
      followSymlinks: options?.followSymlinks,
      sandbox: options?.sandbox,
    };
    return this.#client.request('fs/getMetadata', params, call(options, true));
  }

  async canonicalize(path: string, options?: FsCallOptions): Promise<string> {
    const params = { path: pathToFileUri(path), sandbox: options?.sandbox };
    return fileUriToPath((await this.#client.request('fs/canonicalize', params, call(options, true))).path);
  }

  async readDirectory(path: string, options?: FsCallOptions): Promise<DirectoryEntry[]> {
    const params = { path: pathToFileUri(path), sandbox: options?.sandbox };
    return (await this.#client.request('fs/readDirectory', params, call(options, true))).entries;
  }

  async walk(path: string, walkOptions: WalkOptions, options?: FsCallOptions): Promise<WalkOutcome> {
    const params = { path: pathToFileUri(path), options: walkOptions, sandbox: options?.sandbox };
    const outcome = await this.#client.request('fs/walk', params, call(options, true));
    return {
      entries: outcome.entries.map((entry) => ({ ...entry, path: fileUriToPath(entry.path) })),
      errors: outcome.errors.map((error) => ({ ...error, path: fileUriToPath(error.path) })),
      truncated: outcome.truncated,
    };
  }

  async remove(
    path: string,
    options?: FsCallOptions & FollowOption & { readonly recursive?: boolean; readonly force?: boolean },
  ): Promise<void> {
    const params = {
      path: pathToFileUri(path),
      recursive: options?.recursive,
      force: options?.force,
      followSymlinks: options?.followSymlinks,
      sandbox: options?.sandbox,
    };
    await this.#client.request('fs/remove', params, call(options, false));
  }

  async copy(
    sourcePath: string,
    destinationPath: string,
    options: FsCallOptions & { readonly recursive: boolean },
  ): Promise<void> {
    const params = {
      sourcePath: pathToFileUri(sourcePath),
      destinationPath: pathToFileUri(destinationPath),
      recursive: options.recursive,
      sandbox: options.sandbox,
    };
    await this.#client.request('fs/copy', params, call(options, false));
  }

  async open(
    path: string,
    options?: FsCallOptions & { readonly mode?: FsOpenMode },
  ): Promise<ExecFileHandle> {
    const handleId = `${this.#prefix}${++this.#nextHandle}`;
    const params = { handleId, path: pathToFileUri(path), mode: options?.mode, sandbox: options?.sandbox };
    await this.#client.request('fs/open', params, call(options, false));
    return new RemoteFileHandle(this.#client, handleId);
  }

  async watchMissing(
    missing: readonly string[],
    options?: { readonly present?: string | undefined; readonly cancelSignal?: AbortSignal | undefined },
  ): Promise<MissingWatch> {
    const watchId = ++this.#nextWatch;
    // The server replaces the connection's watch: so does this side.
    this.#takeWatch()?.end('superseded');
    const params = {
      watchId,
      missing: missing.map((path) => pathToFileUri(path)),
      present: options?.present === undefined ? null : pathToFileUri(options.present),
    };
    const { watching } = await this.#client.request('fs/watchMissing', params, {
      retry: false,
      cancelSignal: options?.cancelSignal,
    });
    if (!watching) {
      const close = (): Promise<void> => Promise.resolve();
      return { watching: false, ended: Promise.resolve('changed'), close, [Symbol.asyncDispose]: close };
    }
    const watch = new RemoteMissingWatch(watchId, async () => {
      if (this.#watch !== watch) return;
      this.#watch = undefined;
      // No unwatch method exists: an empty watch under a fresh id replaces (ends) the server's.
      await this.#client
        .request('fs/watchMissing', { watchId: ++this.#nextWatch, missing: [] }, { retry: false })
        .catch(() => undefined);
    });
    this.#watch = watch;
    options?.cancelSignal?.addEventListener('abort', () => void watch.close(), { once: true });
    return watch;
  }

  #takeWatch(): RemoteMissingWatch | undefined {
    const watch = this.#watch;
    this.#watch = undefined;
    return watch;
  }
}
