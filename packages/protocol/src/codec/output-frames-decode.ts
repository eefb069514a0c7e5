// The JSON codec's fast path for the frame a client reads most: a `process/output` notification
// exactly as the servers write it (execd's fast encoder and the original alike):
//   {"method":"process/output","params":{"processId":"…","seq":N,"stream":"…","chunk":"<base64>"}}
// The same for the execd `process/outputBatch` (JSON form), whose chunks are decoded into one
// allocation:
//   {"method":"process/outputBatch","params":{"processId":"…","chunks":[{"seq":N,"stream":"…","chunk":"<base64>"},…]}}
// Read straight from the frame's bytes: no UTF-8 decoding of the whole frame, no scan, no
// `JSON.parse` of a string as long as the chunk, and the base64 decoded from the bytes it arrived
// in. Anything else (another layout, escapes, non-ASCII, whitespace, a non-canonical base64)
// returns undefined and the ordinary path decides, so results and errors are the ordinary path's.
import { asciiBytes, base64DecodedLength, parseBase64Bytes, parseBase64BytesInto } from '../bytes.ts';
import type { DecodeLimits } from './limits.ts';

const HEAD = asciiBytes('{"method":"process/output","params":{"processId":"');
const SEQ = asciiBytes('","seq":');
const STREAM = asciiBytes(',"stream":"');
const CHUNK = asciiBytes('","chunk":"');
const TAIL = asciiBytes('"}}');

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const ZERO = 0x30;
const NINE = 0x39;
/** Digits of the largest safe integer: a longer seq is left to the ordinary path. */
const MAX_SEQ_DIGITS = 16;
/** A longer process id or stream name is left to the ordinary path. */
const MAX_NAME_BYTES = 1024;

/** The message object of such a frame (`chunk` already bytes), or undefined. */
export function decodeOutputJsonFrame(
  frame: Uint8Array,
  limits: DecodeLimits,
): { method: 'process/output'; params: Record<string, unknown> } | undefined {
  const end = frame.byteLength;
  if (end > limits.maxFrameBytes || !startsWith(frame, 0, HEAD)) return undefined;
  const idEnd = plainStringEnd(frame, HEAD.length);
  if (idEnd < 0 || !startsWith(frame, idEnd, SEQ)) return undefined;
  const seqAt = parseSeq(frame, idEnd + SEQ.length);
  if (seqAt === undefined || !startsWith(frame, seqAt.end, STREAM)) return undefined;
  const { seq } = seqAt;
  const streamStart = seqAt.end + STREAM.length;
  const streamEnd = plainStringEnd(frame, streamStart);
  if (streamEnd < 0 || !startsWith(frame, streamEnd, CHUNK)) return undefined;
  const chunkStart = streamEnd + CHUNK.length;
  const chunkEnd = end - TAIL.length;
  if (chunkEnd < chunkStart || !startsWith(frame, chunkEnd, TAIL)) return undefined;
  if (chunkEnd - chunkStart > limits.maxStringLength) return undefined;
  // Canonical base64 or nothing: a quote, a backslash or any other byte there is refused here.
  const chunk = parseBase64Bytes(frame, chunkStart, chunkEnd);
  if (chunk === null) return undefined;
  return {
    method: 'process/output',
    params: {
      processId: asciiText(frame, HEAD.length, idEnd),
      seq,
      stream: asciiText(frame, streamStart, streamEnd),
      chunk,
    },
  };
}

const BATCH_HEAD = asciiBytes('{"method":"process/outputBatch","params":{"processId":"');
const BATCH_CHUNKS = asciiBytes('","chunks":[');
const BATCH_SEQ = asciiBytes('{"seq":');
const BATCH_CHUNK_END = asciiBytes('"}');
const BATCH_TAIL = asciiBytes(']}}');
const COMMA = 0x2c;
/** Values of a batch as the ordinary decoder counts them: root, method, params, processId, chunks. */
const BATCH_FIXED_VALUES = 5;
/** Per chunk: the element and its three members. */
const VALUES_PER_CHUNK = 4;
/** Root, params, the chunk array and a chunk. */
const BATCH_DEPTH = 4;

interface BatchChunkAt {
  readonly seq: number;
  readonly stream: string;
  readonly start: number;
  readonly end: number;
}

/** The message object of a `process/outputBatch` JSON frame (chunks already bytes), or undefined. */
export function decodeOutputBatchJsonFrame(
  frame: Uint8Array,
  limits: DecodeLimits,
): { method: 'process/outputBatch'; params: Record<string, unknown> } | undefined {
  const end = frame.byteLength;
  if (end > limits.maxFrameBytes || limits.maxDepth < BATCH_DEPTH || !startsWith(frame, 0, BATCH_HEAD))
    return undefined;
  const idEnd = plainStringEnd(frame, BATCH_HEAD.length);
  if (idEnd < 0 || idEnd - BATCH_HEAD.length > limits.maxStringLength) return undefined;
  if (!startsWith(frame, idEnd, BATCH_CHUNKS)) return undefined;
  let i = idEnd + BATCH_CHUNKS.length;
  const found: BatchChunkAt[] = [];
  let total = 0;
  if (frame[i] !== 0x5d) {
    for (;;) {
      if (!startsWith(frame, i, BATCH_SEQ)) return undefined;
      const seqAt = parseSeq(frame, i + BATCH_SEQ.length);
      if (seqAt === undefined || !startsWith(frame, seqAt.end, STREAM)) return undefined;
      const streamStart = seqAt.end + STREAM.length;
      const streamEnd = plainStringEnd(frame, streamStart);
      if (streamEnd < 0 || streamEnd - streamStart > limits.maxStringLength) return undefined;
      if (!startsWith(frame, streamEnd, CHUNK)) return undefined;
      const start = streamEnd + CHUNK.length;
      const stop = frame.indexOf(QUOTE, start);
      if (stop < 0 || stop - start > limits.maxStringLength || !startsWith(frame, stop, BATCH_CHUNK_END))
        return undefined;
      const size = base64DecodedLength(frame, start, stop);
      if (size < 0) return undefined;
      total += size;
      found.push({ seq: seqAt.seq, stream: asciiText(frame, streamStart, streamEnd), start, end: stop });
      if (BATCH_FIXED_VALUES + VALUES_PER_CHUNK * found.length > limits.maxValues) return undefined;
      i = stop + BATCH_CHUNK_END.length;
      if (frame[i] !== COMMA) break;
      i++;
    }
  }
  if (i + BATCH_TAIL.length !== end || !startsWith(frame, i, BATCH_TAIL)) return undefined;
  // One allocation for every chunk of the frame; each chunk is a view of its part.
  const bytes = newBytes(total);
  const chunks: { seq: number; stream: string; chunk: Uint8Array }[] = [];
  let at = 0;
  for (const c of found) {
    const written = parseBase64BytesInto(frame, c.start, c.end, bytes, at);
    if (written < 0) return undefined;
    chunks.push({
      seq: c.seq,
      stream: c.stream,
      chunk: new Uint8Array(bytes.buffer, bytes.byteOffset + at, written),
    });
    at += written;
  }
  return {
    method: 'process/outputBatch',
    params: { processId: asciiText(frame, BATCH_HEAD.length, idEnd), chunks },
  };
}

/** A seq's digits at `start`: a safe integer without leading zeros, and where it ends. */
function parseSeq(frame: Uint8Array, start: number): { seq: number; end: number } | undefined {
  let i = start;
  const stop = Math.min(frame.byteLength, start + MAX_SEQ_DIGITS + 1);
  while (i < stop && frame[i]! >= ZERO && frame[i]! <= NINE) i++;
  const digits = i - start;
  if (digits === 0 || digits > MAX_SEQ_DIGITS || (digits > 1 && frame[start] === ZERO)) return undefined;
  const seq = Number(asciiText(frame, start, i));
  return Number.isSafeInteger(seq) ? { seq, end: i } : undefined;
}

/** Uninitialised memory where there is a native Buffer (every byte is written before it is read). */
function newBytes(size: number): Uint8Array {
  const native = (globalThis as { Buffer?: { allocUnsafeSlow(size: number): Uint8Array } }).Buffer;
  return native ? native.allocUnsafeSlow(size) : new Uint8Array(size);
}

function startsWith(frame: Uint8Array, at: number, expected: Uint8Array): boolean {
  if (at + expected.length > frame.byteLength) return false;
  for (let k = 0; k < expected.length; k++) if (frame[at + k] !== expected[k]) return false;
  return true;
}

/**
 * Where the string starting at `start` (after its opening quote) ends, when every byte of it is
 * printable ASCII without a backslash (so its bytes are its text), at most `MAX_NAME_BYTES`;
 * else -1.
 */
function plainStringEnd(frame: Uint8Array, start: number): number {
  const stop = Math.min(frame.byteLength, start + MAX_NAME_BYTES + 1);
  for (let i = start; i < stop; i++) {
    const b = frame[i]!;
    if (b === QUOTE) return i;
    if (b < 0x20 || b > 0x7e || b === BACKSLASH) return -1;
  }
  return -1;
}

const text = new TextDecoder();

/** The text of bytes already checked to be ASCII. */
function asciiText(frame: Uint8Array, start: number, end: number): string {
  return text.decode(frame.subarray(start, end));
}
