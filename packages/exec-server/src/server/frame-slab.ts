import type { Writable } from 'node:stream';
import type { OutputFrameWriter } from '@execd/protocol';
import { MAX_POOLED_BYTES_PER_SIZE, POOL_IDLE_MS, SlabPool } from './slab-pool.ts';

/**
 * Most memory taken at a time for a connection's frames (a larger frame gets a slab of its own
 * size): 120 KiB, under glibc's 128 KiB mmap threshold (the launchers fix it there), so a new slab
 * comes from the allocator's heap, not fresh pages from the system.
 */
export const FRAME_SLAB_BYTES: number = 120 * 1024;
/** Least memory taken at a time: a connection with little output keeps little. */
export const MIN_FRAME_SLAB_BYTES: number = 16 * 1024;
/**
 * The slab of a frame larger than {@link FRAME_SLAB_BYTES}: a JSON `process/outputBatch` of
 * `MAX_OUTPUT_BATCH_BYTES` (256 KiB, ~342 KiB in base64) fits one.
 */
export const LARGE_FRAME_SLAB_BYTES: number = 384 * 1024;

/**
 * The sizes a slab is taken in (a turn's room rounds up to one): from the least a quiet
 * connection holds to the largest frame's. Every one is kept for reuse once written.
 */
export const FRAME_SLAB_SIZES: readonly number[] = [
  MIN_FRAME_SLAB_BYTES,
  32 * 1024,
  64 * 1024,
  FRAME_SLAB_BYTES,
  LARGE_FRAME_SLAB_BYTES,
];

/** The slabs of every connection of this process come from here and go back once written. */
const SHARED_POOL = new SlabPool(FRAME_SLAB_SIZES, MAX_POOLED_BYTES_PER_SIZE, POOL_IDLE_MS);

/** A slab and the segments of it the socket has not finished writing. */
interface SlabInUse {
  readonly bytes: Buffer;
  /** Segments taken and not yet reported {@link FrameSlab.written}. */
  writes: number;
  /** No longer the connection's current slab: back to the pool once `writes` is 0. */
  retired: boolean;
}

/** First header byte of a final text frame, and of a final binary one. */
const FIN_TEXT = 0x81;
const FIN_BINARY = 0x82;

/**
 * One connection's output frames laid out, WebSocket header and all, one after the other in
 * memory of its own: what a turn collects leaves as one socket write (one buffer, not a header and
 * a body per frame, and no allocation per frame). The frames are final, unmasked, uncompressed
 * text (JSON) or binary (msgpack) frames, exactly what `ws` writes for a server's `send` on a
 * connection without permessage-deflate. A slab is filled front to back and never rewritten while
 * the socket may still hold a segment of it; a full slab is replaced by a new one,
 * sized for twice what a turn lays out (16 to 120 KiB). Once the socket has written every
 * segment of a slab (see `settle`), the slab is filled again from the front while the
 * connection streams; otherwise a slab more than half used is let go, so an idle connection
 * holds at most half a slab of room it may never use. Slabs come in {@link FRAME_SLAB_SIZES}
 * from a pool shared by the process (`slab-pool.ts`) and go back to it once the socket has
 * reported every segment of them {@link FrameSlab.written}: behind a client that reads one frame
 * at a time (Codex), a turn's slab is rarely written when the turn ends, and a fresh slab per
 * turn (memory V8 counts as external, which brings full collections) took ~20 % of the server's
 * CPU per streamed GiB.
 */
export class FrameSlab {
  readonly #pool: SlabPool;
  #slab: Buffer | undefined;
  /** Slabs with segments in the socket, by their memory (a segment's `buffer`). */
  readonly #inUse = new Map<ArrayBufferLike, SlabInUse>();
  /** Where the bytes not yet taken start. */
  #start = 0;
  /** Where the next frame goes. */
  #end = 0;
  /** Bytes of the last segment taken: how much a turn of this connection lays out. */
  #lastTaken = 0;
  /** Bytes taken since the last `settle`: the whole turn, spills included. */
  #takenInTurn = 0;

  /** `pool`: where slabs come from and go back to (default: the process's). */
  constructor(pool: SlabPool = SHARED_POOL) {
    this.#pool = pool;
  }

  /** Bytes of memory held (the current slab's size), 0 when none. */
  get capacity(): number {
    return this.#slab?.byteLength ?? 0;
  }

  /** Bytes appended and not yet taken. */
  get pending(): number {
    return this.#end - this.#start;
  }

  /**
   * Appends one frame whose payload `frame` writes, a text frame or a `binary` one. When the slab
   * is too full, `spill` first receives what is pending (to be written before this frame) and a
   * new slab is taken. Returns the frame's length on the wire.
   */
  append(frame: OutputFrameWriter, binary: boolean, spill: (segment: Buffer) => void): number {
    const size = frame.size;
    const head = size < 126 ? 2 : size < 0x10000 ? 4 : 10;
    const length = head + size;
    if (this.#slab === undefined || this.#slab.byteLength - this.#end < length) {
      const turn = Math.max(this.pending + length, this.#lastTaken);
      const pending = this.take();
      if (pending !== undefined) spill(pending);
      const room = Math.min(FRAME_SLAB_BYTES, Math.max(MIN_FRAME_SLAB_BYTES, 2 * turn));
      this.#retire();
      // From the pool, rounded up to a kept size (a frame larger than any gets one of its own size).
      this.#slab = this.#pool.take(Math.max(room, length));
      this.#start = 0;
      this.#end = 0;
    }
    const slab = this.#slab;
    let at = this.#end;
    slab[at++] = binary ? FIN_BINARY : FIN_TEXT;
    if (head === 2) slab[at++] = size;
    else if (head === 4) {
      slab[at++] = 126;
      slab.writeUInt16BE(size, at);
      at += 2;
    } else {
      slab[at++] = 127;
      slab.writeUInt32BE(Math.floor(size / 0x100000000), at);
      slab.writeUInt32BE(size >>> 0, at + 4);
      at += 8;
    }
    frame.write(slab, at);
    this.#end = at + size;
    return length;
  }

  /**
   * What was appended since the last take (a view of the slab), or undefined when nothing was.
   * Report it {@link written} once the socket is done with it (its write callback).
   */
  take(): Buffer | undefined {
    if (this.#slab === undefined || this.#end === this.#start) return undefined;
    const segment = this.#slab.subarray(this.#start, this.#end);
    let use = this.#inUse.get(this.#slab.buffer);
    if (use === undefined) {
      use = { bytes: this.#slab, writes: 0, retired: false };
      this.#inUse.set(this.#slab.buffer, use);
    }
    use.writes += 1;
    this.#lastTaken = segment.byteLength;
    this.#takenInTurn += segment.byteLength;
    this.#start = this.#end;
    return segment;
  }

  /**
   * Called once the socket was handed a turn's segments; `written`: it has given every byte of
   * them to the kernel, so nothing refers to a segment any more. A slab whose frames are all
   * taken is then filled again from its front (streaming takes no new memory per turn) while
   * its size fits the output (at most four times the turn's); otherwise a slab more than half
   * used is let go (it is still the socket's, or too large for what the connection sends).
   */
  settle(written: boolean): void {
    const turn = this.#takenInTurn;
    this.#takenInTurn = 0;
    const slab = this.#slab;
    if (slab === undefined || this.#end !== this.#start) return;
    if (written && slab.byteLength <= Math.max(MIN_FRAME_SLAB_BYTES, 4 * turn)) {
      this.#start = 0;
      this.#end = 0;
    } else if (2 * this.#end > slab.byteLength) {
      this.#retire();
      this.#start = 0;
      this.#end = 0;
    }
  }

  /**
   * Writes a segment {@link take}n from this slab to `socket`; once the socket is done with it,
   * its slab may serve any connection again ({@link written}), then `after` runs.
   */
  writeSegment(socket: Writable, segment: Buffer, after?: () => void): void {
    socket.write(segment, () => {
      this.written(segment);
      after?.();
    });
  }

  /**
   * The socket is done with `segment` (written to the kernel, or failed): a retired slab with no
   * segment left in the socket goes back to the pool.
   */
  written(segment: Buffer): void {
    const use = this.#inUse.get(segment.buffer);
    if (use === undefined) return;
    use.writes -= 1;
    if (use.writes > 0 || !use.retired) return;
    this.#inUse.delete(segment.buffer);
    this.#pool.give(use.bytes);
  }

  /** Forgets what is pending and every slab (the socket is gone: what it held is not reused). */
  drop(): void {
    this.#slab = undefined;
    this.#start = 0;
    this.#end = 0;
    this.#inUse.clear();
  }

  /** The current slab is replaced: back to the pool now if the socket holds none of it, else once it does not. */
  #retire(): void {
    const slab = this.#slab;
    if (slab === undefined) return;
    this.#slab = undefined;
    const use = this.#inUse.get(slab.buffer);
    if (use === undefined || use.writes === 0) {
      this.#inUse.delete(slab.buffer);
      this.#pool.give(slab);
    } else use.retired = true;
  }
}
