/**
 * Splits a byte stream into raw WebSocket frames (RFC 6455 §5.2) without unmasking or decoding
 * them: each frame comes out exactly as it was on the wire, header and all. Used by the fault
 * proxy to forward, hold, delay or cut traffic frame by frame.
 */
export class WsFrameSplitter {
  #buffer: Buffer = Buffer.alloc(0);

  /** Feeds bytes; returns the frames completed by them, in order. */
  push(bytes: Buffer): Buffer[] {
    this.#buffer = this.#buffer.length === 0 ? bytes : Buffer.concat([this.#buffer, bytes]);
    const frames: Buffer[] = [];
    for (;;) {
      const length = frameLength(this.#buffer);
      if (length === undefined || this.#buffer.length < length) break;
      frames.push(Buffer.from(this.#buffer.subarray(0, length)));
      this.#buffer = this.#buffer.subarray(length);
    }
    return frames;
  }

  /** Bytes of an incomplete frame still held. */
  get buffered(): number {
    return this.#buffer.length;
  }
}

/** Total length of the frame at the start of `buffer`, or undefined while its header is incomplete. */
function frameLength(buffer: Buffer): number | undefined {
  if (buffer.length < 2) return undefined;
  const second = buffer[1]!;
  const masked = (second & 0x80) !== 0;
  const short = second & 0x7f;
  let header = 2;
  let payload = short;
  if (short === 126) {
    if (buffer.length < 4) return undefined;
    payload = buffer.readUInt16BE(2);
    header = 4;
  } else if (short === 127) {
    if (buffer.length < 10) return undefined;
    payload = Number(buffer.readBigUInt64BE(2));
    header = 10;
  }
  return header + (masked ? 4 : 0) + payload;
}

/** Index just past the `\r\n\r\n` that ends an HTTP head, or -1. */
export function httpHeadEnd(buffer: Buffer): number {
  const index = buffer.indexOf('\r\n\r\n');
  return index < 0 ? -1 : index + 4;
}
