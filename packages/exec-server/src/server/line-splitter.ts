const LF = 0x0a;
const CR = 0x0d;

/** Lines completed by one chunk, and whether the line in progress outgrew the limit. */
export interface SplitResult {
  /** Complete lines without their `\n` or `\r\n` terminator. */
  readonly lines: Uint8Array[];
  /** True once a line (terminated or not) is longer than `maxLineBytes`; stop reading then. */
  readonly overlong: boolean;
}

/**
 * Splits a byte stream into `\n`- or `\r\n`-terminated lines of at most `maxLineBytes` (the
 * terminator not counted). An overlong line is reported as soon as it is known to be too long,
 * without waiting for its end, so a peer cannot make the server buffer without bound.
 */
export class LineSplitter {
  readonly #maxLineBytes: number;
  #pending: Uint8Array[] = [];
  #pendingBytes = 0;
  #overlong = false;

  constructor(maxLineBytes: number) {
    this.#maxLineBytes = maxLineBytes;
  }

  /** Feeds one chunk. After `overlong` was reported, further input is ignored. */
  push(chunk: Uint8Array): SplitResult {
    const lines: Uint8Array[] = [];
    if (this.#overlong) return { lines, overlong: true };
    let start = 0;
    for (let newline = chunk.indexOf(LF, start); newline >= 0; newline = chunk.indexOf(LF, start)) {
      const piece = chunk.subarray(start, newline);
      const line = this.#pending.length === 0 ? piece : Buffer.concat([...this.#pending, piece]);
      this.#pending = [];
      this.#pendingBytes = 0;
      const end = line.length > 0 && line[line.length - 1] === CR ? line.length - 1 : line.length;
      if (end > this.#maxLineBytes) {
        this.#overlong = true;
        return { lines, overlong: true };
      }
      lines.push(line.subarray(0, end));
      start = newline + 1;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      this.#pending.push(rest);
      this.#pendingBytes += rest.length;
      // One byte of slack for a `\r` whose `\n` has not arrived yet.
      const lastIsCr = rest[rest.length - 1] === CR;
      if (
        this.#pendingBytes > this.#maxLineBytes + 1 ||
        (this.#pendingBytes === this.#maxLineBytes + 1 && !lastIsCr)
      ) {
        this.#overlong = true;
        this.#pending = [];
        this.#pendingBytes = 0;
        return { lines, overlong: true };
      }
    }
    return { lines, overlong: false };
  }
}
