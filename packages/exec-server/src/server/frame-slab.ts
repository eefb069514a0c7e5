import type { OutputFrameWriter } from '@execd/protocol';

/** Most memory taken at a time for a connection's frames (a larger frame gets a slab of its own size). */
export const FRAME_SLAB_BYTES: number = 256 * 1024;
/** Least memory taken at a time: a connection with little output keeps little. */
export const MIN_FRAME_SLAB_BYTES: number = 16 * 1024;

const FIN_TEXT = 0x81;

/**
 * One connection's output frames laid out, WebSocket header and all, one after the other in
 * memory of its own: what a turn collects leaves as one socket write (one buffer, not a header and
 * a body per frame, and no allocation per frame). The frames are final, unmasked, uncompressed
 * text frames, exactly what `ws` writes for a server's `send` on a connection without
 * permessage-deflate. A slab is filled front to back and never rewritten: a segment handed to
 * the socket stays as it was until the socket let go of it; a full slab is replaced by a new one,
 * sized for twice what a turn lays out (16 to 256 KiB), and a slab more than half
 * used is let go when its frames are taken, so an idle connection holds at most half a slab of
 * room it may never use.
 */
export class FrameSlab {
  #slab: Buffer | undefined;
  /** Where the bytes not yet taken start. */
  #start = 0;
  /** Where the next frame goes. */
  #end = 0;
  /** Bytes of the last segment taken: how much a turn of this connection lays out. */
  #lastTaken = 0;

  /** Bytes of memory held (the current slab's size), 0 when none. */
  get capacity(): number {
    return this.#slab?.byteLength ?? 0;
  }

  /** Bytes appended and not yet taken. */
  get pending(): number {
    return this.#end - this.#start;
  }

  /**
   * Appends one text frame whose payload `frame` writes. When the slab is too full, `spill`
   * first receives what is pending (to be written before this frame) and a new slab is taken.
   * Returns the frame's length on the wire.
   */
  appendText(frame: OutputFrameWriter, spill: (segment: Buffer) => void): number {
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
    slab[at++] = FIN_TEXT;
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
    this.#start = this.#end;
    if (2 * this.#end > this.#slab.byteLength) this.drop();
    return segment;
  }

  /** Forgets what is pending and the slab (the socket is gone). */
  drop(): void {
    this.#slab = undefined;
    this.#start = 0;
    this.#end = 0;
  }
}
