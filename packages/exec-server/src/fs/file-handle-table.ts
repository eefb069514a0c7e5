import type { FileHandle } from 'node:fs/promises';
import { type FsReadBlockResponse, RpcError } from '@execd/protocol';
import { refused } from './fs-errors.ts';
import { checkBlockLength, readBlock, writeBlock } from './open-file.ts';

/** Most handles one connection may hold open (the original's limit, with its text). */
export const FS_MAX_OPEN_HANDLES = 128;
/** Longest handle id, in UTF-8 bytes (the original's limit). */
export const FS_HANDLE_ID_MAX_BYTES = 32;

/**
 * The `fs/open` handles of one connection (spec §2.4a): caller-chosen ids, at most 128 open,
 * positional reads and writes, the handle dropped after a failed read (as the original), everything closed when the connection ends, so no descriptor outlives it.
 */
export class FileHandleTable {
  readonly #handles = new Map<string, FileHandle>();
  /** Ids being opened: counted against the cap and refused as duplicates while the open runs. */
  readonly #opening = new Set<string>();
  #closed = false;

  /** Reserves `handleId`, runs `open`, and keeps what it opened. */
  async open(handleId: string, open: () => Promise<FileHandle>): Promise<void> {
    if (new TextEncoder().encode(handleId).length > FS_HANDLE_ID_MAX_BYTES)
      throw refused(`file handle ID must not exceed ${FS_HANDLE_ID_MAX_BYTES} bytes`);
    if (this.#handles.has(handleId) || this.#opening.has(handleId))
      throw refused(`file handle \`${handleId}\` already exists`);
    if (this.#handles.size + this.#opening.size >= FS_MAX_OPEN_HANDLES)
      throw refused(`at most ${FS_MAX_OPEN_HANDLES} file handles may be open per connection`);
    this.#opening.add(handleId);
    try {
      const handle = await open();
      // The connection ended while the file was opening: nobody can close it later.
      if (this.#closed) {
        await handle.close();
        throw new RpcError('invalidRequest', 'the connection is closed');
      }
      this.#handles.set(handleId, handle);
    } finally {
      this.#opening.delete(handleId);
    }
  }

  /** `fs/readBlock`: a bad length is refused before the id is looked at, and keeps the handle. */
  async read(handleId: string, offset: number, length: number): Promise<FsReadBlockResponse> {
    checkBlockLength('read', length);
    const handle = this.#get(handleId);
    try {
      return await readBlock(handle, offset, length);
    } catch (error) {
      await this.#drop(handleId, handle);
      throw error;
    }
  }

  /** `fs/writeBlock`: unlike a failed read, a failed write keeps the handle (as the original). */
  async write(handleId: string, offset: number, chunk: Uint8Array): Promise<void> {
    checkBlockLength('write', chunk.length);
    await writeBlock(this.#get(handleId), offset, chunk);
  }

  /** Closes a handle; an unknown id is fine (as the original). */
  async close(handleId: string): Promise<void> {
    const handle = this.#handles.get(handleId);
    if (handle !== undefined) await this.#drop(handleId, handle);
  }

  /** How many handles are open. */
  get size(): number {
    return this.#handles.size;
  }

  /** Closes every handle; later opens are refused. Idempotent. */
  async closeAll(): Promise<void> {
    this.#closed = true;
    const handles = [...this.#handles.values()];
    this.#handles.clear();
    await Promise.all(handles.map((handle) => handle.close().catch(() => undefined)));
  }

  #get(handleId: string): FileHandle {
    const handle = this.#handles.get(handleId);
    if (handle === undefined) throw new RpcError('notFound', `unknown file handle \`${handleId}\``);
    return handle;
  }

  async #drop(handleId: string, handle: FileHandle): Promise<void> {
    if (this.#handles.get(handleId) === handle) this.#handles.delete(handleId);
    await handle.close().catch(() => undefined);
  }
}
