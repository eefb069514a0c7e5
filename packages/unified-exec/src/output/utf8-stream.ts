import { UNIFIED_EXEC_OUTPUT_DELTA_MAX_BYTES } from '../constants.ts';

const EMPTY = new Uint8Array(0);

/** Length of the well-formed character at `i`: > 0 complete, 0 cut off by the end, -1 malformed. */
function charLengthAt(bytes: Uint8Array, i: number): number {
  const lead = bytes[i] as number;
  if (lead < 0x80) return 1;
  let length: number;
  let low = 0x80;
  let high = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) length = 2;
  else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead === 0xe0) low = 0xa0;
    if (lead === 0xed) high = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead === 0xf0) low = 0x90;
    if (lead === 0xf4) high = 0x8f;
  } else return -1;
  for (let k = 1; k < length; k++) {
    if (i + k >= bytes.length) return 0;
    const byte = bytes[i + k] as number;
    const [min, max] = k === 1 ? [low, high] : [0x80, 0xbf];
    if (byte < min || byte > max) return -1;
  }
  return length;
}

/**
 * Cuts a byte stream into output deltas for UI events: each delta is at most `maxBytes`, never
 * splits a character, holds back an incomplete trailing sequence until its next bytes arrive,
 * and sends runs of malformed bytes as one delta each (so garbage cannot exhaust a delta quota
 * byte by byte). {@link finish} flushes whatever is held back.
 */
export class Utf8DeltaSplitter {
  readonly #maxBytes: number;
  #pending: Uint8Array = EMPTY;

  /** @param maxBytes largest delta; 8192 by default. */
  constructor(maxBytes: number = UNIFIED_EXEC_OUTPUT_DELTA_MAX_BYTES) {
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 1) {
      throw new RangeError(`Utf8DeltaSplitter maxBytes must be a positive integer, got ${maxBytes}`);
    }
    this.#maxBytes = maxBytes;
  }

  /** Bytes held back waiting for the rest of a character. */
  get pendingBytes(): number {
    return this.#pending.length;
  }

  /** Adds bytes and returns the deltas that are ready. */
  push(chunk: Uint8Array): Uint8Array[] {
    if (chunk.length === 0) return [];
    const joined = new Uint8Array(this.#pending.length + chunk.length);
    joined.set(this.#pending, 0);
    joined.set(chunk, this.#pending.length);
    return this.#split(joined, false);
  }

  /** Returns every byte still held back (an incomplete character is flushed as is). */
  finish(): Uint8Array[] {
    const rest = this.#pending;
    this.#pending = EMPTY;
    return this.#split(rest, true);
  }

  #split(bytes: Uint8Array, final: boolean): Uint8Array[] {
    const deltas: Uint8Array[] = [];
    let start = 0;
    while (start < bytes.length) {
      const limit = Math.min(bytes.length, start + this.#maxBytes);
      let end = start;
      // Longest run of whole characters that fits.
      while (end < limit) {
        const length = charLengthAt(bytes, end);
        if (length <= 0 || end + length > limit) break;
        end += length;
      }
      if (end === start) {
        const length = charLengthAt(bytes, start);
        if (length === 0 && !final) break; // an incomplete character: wait for its next bytes
        if (length > 0) {
          end = start + length; // one character larger than maxBytes: send it whole
        } else {
          // A run of malformed bytes (a cut-off character at the very end counts when final).
          end = start + 1;
          while (end < limit && charLengthAt(bytes, end) < (final ? 1 : 0)) end++;
        }
      }
      deltas.push(bytes.slice(start, end));
      start = end;
    }
    this.#pending = start < bytes.length ? bytes.slice(start) : EMPTY;
    return deltas;
  }
}
