// The msgpack codec's fast path for the frame a streaming client reads most: an execd
// `process/outputBatch` notification as the server sends it, in WebSocket fragments whose data
// fragments are the chunks themselves (see `outputBatchMsgpackParts`). Read across the fragments
// as they arrived: each chunk that lies inside one fragment is a view of it (no copy, and no
// concatenation of the whole message first); one that straddles fragments is copied. Anything
// but the exact layout the server writes (another member order, a signed or unsafe seq, a name
// that is not printable ASCII, a limit reached) returns undefined, and the ordinary decoder reads
// the concatenated frame: results and errors stay the ordinary path's.
import { asciiBytes } from '../bytes.ts';
import type { DecodeLimits } from './limits.ts';

const METHOD = asciiBytes('method');
const BATCH = asciiBytes('process/outputBatch');
const PARAMS = asciiBytes('params');
const PROCESS_ID = asciiBytes('processId');
const CHUNKS = asciiBytes('chunks');
const SEQ = asciiBytes('seq');
const STREAM = asciiBytes('stream');
const CHUNK = asciiBytes('chunk');

/** Containers of the layout: the root, params, the chunk array and a chunk. */
const DEPTH = 4;
/** Values as the scan counts them: root, method, params, processId, chunks; then 4 per chunk. */
const FIXED_VALUES = 5;
const VALUES_PER_CHUNK = 4;

/** A cursor over the fragments of one message. */
class FragmentReader {
  readonly #fragments: readonly Uint8Array[];
  #index = 0;
  #offset = 0;

  constructor(fragments: readonly Uint8Array[]) {
    this.#fragments = fragments;
    this.#skipEmpty();
  }

  get atEnd(): boolean {
    return this.#index >= this.#fragments.length;
  }

  /** The next byte, or -1 at the end. */
  u8(): number {
    const fragment = this.#fragments[this.#index];
    if (fragment === undefined) return -1;
    const value = fragment[this.#offset++]!;
    if (this.#offset === fragment.byteLength) this.#next();
    return value;
  }

  /** A big-endian unsigned integer of `size` bytes (at most 4), or -1 past the end. */
  uint(size: number): number {
    let value = 0;
    for (let i = 0; i < size; i++) {
      const b = this.u8();
      if (b < 0) return -1;
      value = value * 256 + b;
    }
    return value;
  }

  /** The next `length` bytes: a view when they lie in one fragment, else a copy; undefined past the end. */
  take(length: number): Uint8Array | undefined {
    const fragment = this.#fragments[this.#index];
    if (length === 0) return new Uint8Array(0);
    if (fragment === undefined) return undefined;
    if (this.#offset + length <= fragment.byteLength) {
      const view = fragment.subarray(this.#offset, this.#offset + length);
      this.#offset += length;
      if (this.#offset === fragment.byteLength) this.#next();
      return view;
    }
    const copy = new Uint8Array(length);
    let filled = 0;
    while (filled < length) {
      const current = this.#fragments[this.#index];
      if (current === undefined) return undefined;
      const n = Math.min(length - filled, current.byteLength - this.#offset);
      copy.set(current.subarray(this.#offset, this.#offset + n), filled);
      filled += n;
      this.#offset += n;
      if (this.#offset === current.byteLength) this.#next();
    }
    return copy;
  }

  /** True (and consumed) when the next bytes are a msgpack string equal to `expected`. */
  expectStr(expected: Uint8Array): boolean {
    if (this.strLength() !== expected.byteLength) return false;
    for (let i = 0; i < expected.byteLength; i++) if (this.u8() !== expected[i]) return false;
    return true;
  }

  /** A string header's length, or -1 when the next value is not a string. */
  strLength(): number {
    const type = this.u8();
    if (type >= 0xa0 && type <= 0xbf) return type & 0x1f;
    if (type === 0xd9) return this.uint(1);
    if (type === 0xda) return this.uint(2);
    if (type === 0xdb) return this.uint(4);
    return -1;
  }

  #next(): void {
    this.#index++;
    this.#offset = 0;
    this.#skipEmpty();
  }

  #skipEmpty(): void {
    while (this.#index < this.#fragments.length && this.#fragments[this.#index]!.byteLength === 0)
      this.#index++;
  }
}

/** A printable-ASCII string of at most `max` bytes, or undefined. */
function asciiString(reader: FragmentReader, max: number): string | undefined {
  const length = reader.strLength();
  if (length < 0 || length > max) return undefined;
  let text = '';
  for (let i = 0; i < length; i++) {
    const b = reader.u8();
    if (b < 0x20 || b > 0x7e) return undefined;
    text += String.fromCharCode(b);
  }
  return text;
}

/** A non-negative safe integer in any unsigned form, or undefined. */
function unsigned(reader: FragmentReader): number | undefined {
  const type = reader.u8();
  if (type >= 0 && type <= 0x7f) return type;
  if (type === 0xcc) return reader.uint(1);
  if (type === 0xcd) return reader.uint(2);
  if (type === 0xce) return reader.uint(4);
  if (type === 0xcf) {
    const high = reader.uint(4);
    const low = reader.uint(4);
    const value = high * 0x100000000 + low;
    return high < 0 || low < 0 || !Number.isSafeInteger(value) ? undefined : value;
  }
  return undefined;
}

/** The length in an array header, or -1. */
function arrayLength(reader: FragmentReader): number {
  const type = reader.u8();
  if (type >= 0x90 && type <= 0x9f) return type & 0x0f;
  if (type === 0xdc) return reader.uint(2);
  if (type === 0xdd) return reader.uint(4);
  return -1;
}

/** The length in a bin header, or -1. */
function binLength(reader: FragmentReader): number {
  const type = reader.u8();
  if (type === 0xc4) return reader.uint(1);
  if (type === 0xc5) return reader.uint(2);
  if (type === 0xc6) return reader.uint(4);
  return -1;
}

/** The message object of a `process/outputBatch` msgpack frame given as fragments, or undefined. */
export function decodeOutputBatchFragments(
  fragments: readonly Uint8Array[],
  limits: DecodeLimits,
): { method: 'process/outputBatch'; params: Record<string, unknown> } | undefined {
  let total = 0;
  for (const fragment of fragments) total += fragment.byteLength;
  if (total > limits.maxFrameBytes || limits.maxDepth < DEPTH) return undefined;
  const r = new FragmentReader(fragments);
  if (r.u8() !== 0x82 || !r.expectStr(METHOD) || !r.expectStr(BATCH) || !r.expectStr(PARAMS))
    return undefined;
  if (r.u8() !== 0x82 || !r.expectStr(PROCESS_ID)) return undefined;
  const processId = asciiString(r, limits.maxStringLength);
  if (processId === undefined || !r.expectStr(CHUNKS)) return undefined;
  const count = arrayLength(r);
  if (count < 0 || count > limits.maxValues || FIXED_VALUES + VALUES_PER_CHUNK * count > limits.maxValues)
    return undefined;
  const chunks: { seq: number; stream: string; chunk: Uint8Array }[] = [];
  for (let i = 0; i < count; i++) {
    if (r.u8() !== 0x83 || !r.expectStr(SEQ)) return undefined;
    const seq = unsigned(r);
    if (seq === undefined || seq < 0 || !r.expectStr(STREAM)) return undefined;
    const stream = asciiString(r, limits.maxStringLength);
    if (stream === undefined || !r.expectStr(CHUNK)) return undefined;
    const length = binLength(r);
    if (length < 0 || length > limits.maxBinLength) return undefined;
    const chunk = r.take(length);
    if (chunk === undefined) return undefined;
    chunks.push({ seq, stream, chunk });
  }
  return r.atEnd ? { method: 'process/outputBatch', params: { processId, chunks } } : undefined;
}
