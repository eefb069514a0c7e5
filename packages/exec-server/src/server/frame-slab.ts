import type { OutputFrameWriter } from '@execd/protocol';

/**
 * Most memory taken at a time for a connection's frames (a larger frame gets a slab of its own
 * size): 120 KiB, under glibc's 128 KiB mmap threshold (the launchers fix it there), so a new slab
 * comes from the allocator's heap, not fresh pages from the system.
 */
export const FRAME_SLAB_BYTES: number = 120 * 1024;
/** Least memory taken at a time: a connection with little output keeps little. */
export const MIN_FRAME_SLAB_BYTES: number = 16 * 1024;

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
 * holds at most half a slab of room it may never use.
 */
export class FrameSlab {
  #slab: Buffer | undefined;
  /** Where the bytes not yet taken start. */
  #start = 0;
  /** Where the next frame goes. */
  #end = 0;
  /** Bytes of the last segment taken: how much a turn of this connection lays out. */
  #lastTaken = 0;
  /** Bytes taken since the last `settle`: the whole turn, spills included. */
  #takenInTurn = 0;

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
      this.#slab = Buffer.allocUnsafeSlow(Math.max(room, length));
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

  /** What was appended since the last take (a view of the slab), or undefined when nothing was. */
  take(): Buffer | undefined {
    if (this.#slab === undefined || this.#end === this.#start) return undefined;
    const segment = this.#slab.subarray(this.#start, this.#end);
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
    } else if (2 * this.#end > slab.byteLength) this.drop();
  }

  /** Forgets what is pending and the slab (the socket is gone). */
  drop(): void {
    this.#slab = undefined;
    this.#start = 0;
    this.#end = 0;
  }
}
