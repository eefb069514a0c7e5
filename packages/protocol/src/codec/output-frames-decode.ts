// The JSON codec's fast path for the frame a client reads most: a `process/output` notification
// exactly as the servers write it (execd's fast encoder and the original alike):
//   {"method":"process/output","params":{"processId":"…","seq":N,"stream":"…","chunk":"<base64>"}}
// Read straight from the frame's bytes: no UTF-8 decoding of the whole frame, no scan, no
// `JSON.parse` of a string as long as the chunk, and the base64 decoded from the bytes it arrived
// in. Anything else (another layout, escapes, non-ASCII, whitespace, a non-canonical base64)
// returns undefined and the ordinary path decides, so results and errors are the ordinary path's.
import { parseBase64Bytes } from '../bytes.ts';
import type { DecodeLimits } from './limits.ts';

const ascii = (text: string): Uint8Array => Uint8Array.from(text, (c) => c.charCodeAt(0));

const HEAD = ascii('{"method":"process/output","params":{"processId":"');
const SEQ = ascii('","seq":');
const STREAM = ascii(',"stream":"');
const CHUNK = ascii('","chunk":"');
const TAIL = ascii('"}}');

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
  let i = idEnd + SEQ.length;
  const seqStart = i;
  while (i < end && i - seqStart <= MAX_SEQ_DIGITS && frame[i]! >= ZERO && frame[i]! <= NINE) i++;
  const digits = i - seqStart;
  if (digits === 0 || digits > MAX_SEQ_DIGITS || (digits > 1 && frame[seqStart] === ZERO)) return undefined;
  const seq = Number(asciiText(frame, seqStart, i));
  if (!Number.isSafeInteger(seq) || !startsWith(frame, i, STREAM)) return undefined;
  const streamStart = i + STREAM.length;
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
