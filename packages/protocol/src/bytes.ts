// Base64 and UTF-8 helpers without Node APIs (this package runs in browsers and workers too).
// Standard alphabet with padding: the JSON codec's dialect, as the original exec-server.
import {
  decodeBase64Portable,
  encodeBase64Portable,
  isBase64Portable,
  parseBase64Ascii,
} from './internal/base64-portable.ts';

type BufferLike = {
  from(data: ArrayBufferLike, byteOffset: number, length: number): { toString(encoding: string): string };
  from(data: string, encoding: string): Uint8Array;
  byteLength(text: string, encoding: string): number;
  allocUnsafeSlow(size: number): Uint8Array & {
    write(text: string, offset: number, length: number, encoding: string): number;
  };
};
// Use the host's native implementation when there is one (Node's Buffer is ~10x faster).
const NativeBuffer = (globalThis as { Buffer?: BufferLike }).Buffer;

/**
 * The pieces as UTF-8 bytes in one allocation, each `Uint8Array` piece written as its standard
 * padded base64: no string concatenation and no second encoding pass on Node (the portable
 * fallback encodes the joined text).
 */
export function utf8WithBase64(pieces: readonly (string | Uint8Array)[]): Uint8Array {
  const native = NativeBuffer as unknown as NativeWriteBuffer | undefined;
  if (native?.allocUnsafe === undefined) return new TextEncoder().encode(joinedText(pieces));
  const out = native.allocUnsafe(utf8WithBase64Size(pieces));
  writeUtf8WithBase64(pieces, out, 0);
  return out;
}

/** The byte length of {@link utf8WithBase64}'s result, without making it. */
export function utf8WithBase64Size(pieces: readonly (string | Uint8Array)[]): number {
  const native = NativeBuffer as unknown as NativeWriteBuffer | undefined;
  let size = 0;
  for (const piece of pieces) {
    if (typeof piece !== 'string') size += Math.ceil(piece.byteLength / 3) * 4;
    else
      size +=
        native?.byteLength === undefined
          ? encoder.encode(piece).byteLength
          : native.byteLength(piece, 'utf8');
  }
  return size;
}

/**
 * Writes what {@link utf8WithBase64} returns into `target` at `at` (it must have room for
 * {@link utf8WithBase64Size} bytes there); returns how many bytes it wrote.
 */
export function writeUtf8WithBase64(
  pieces: readonly (string | Uint8Array)[],
  target: Uint8Array,
  at: number,
): number {
  const native = NativeBuffer as unknown as NativeWriteBuffer | undefined;
  if (native?.from === undefined) {
    const bytes = new TextEncoder().encode(joinedText(pieces));
    target.set(bytes, at);
    return bytes.byteLength;
  }
  const out = (
    typeof (target as Partial<WritableBytes>).write === 'function'
      ? target
      : native.from(target.buffer, target.byteOffset, target.byteLength)
  ) as WritableBytes;
  let pos = at;
  for (const piece of pieces) {
    if (typeof piece === 'string') pos += out.write(piece, pos, out.byteLength - pos, 'utf8');
    else {
      const b64 = encodeBase64(piece);
      pos += out.write(b64, pos, b64.length, 'latin1');
    }
  }
  return pos - at;
}

function joinedText(pieces: readonly (string | Uint8Array)[]): string {
  let text = '';
  for (const piece of pieces) text += typeof piece === 'string' ? piece : encodeBase64(piece);
  return text;
}

type WritableBytes = Uint8Array & {
  write(text: string, offset: number, length: number, encoding: string): number;
};

type NativeWriteBuffer = {
  allocUnsafe(size: number): WritableBytes;
  from(data: ArrayBufferLike, byteOffset: number, length: number): WritableBytes;
  byteLength(text: string, encoding: string): number;
};

/** Encodes bytes as standard padded base64. */
export function encodeBase64(bytes: Uint8Array): string {
  if (NativeBuffer)
    return NativeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
  return encodeBase64Portable(bytes);
}

/**
 * True when `text` is canonical standard padded base64, exactly what the original accepts: the
 * standard alphabet, length a multiple of 4, at most two `=` at the end, no whitespace, and zero
 * bits after the last byte (`QR==` is refused: the original says `Invalid last symbol`).
 */
export function isBase64(text: string): boolean {
  return parseBase64(text) !== null;
}

/**
 * Decodes canonical standard padded base64 (see `isBase64`), or returns null when `text` is not.
 * The result is a plain `Uint8Array` that owns its buffer (never a view into a shared pool).
 */
export function parseBase64(text: string): Uint8Array | null {
  if (text.length % 4 !== 0) return null;
  if (NativeBuffer) return parseBase64Native(NativeBuffer, text);
  return isBase64Portable(text) ? decodeBase64Portable(text) : null;
}

/**
 * Node's decoder is lenient: it skips whitespace and junk, stops at an `=` inside, reads `-_` as
 * `+/`, reads only the low byte of a character beyond ASCII (`Ł` as `A`) and ignores trailing
 * bits. So: only ASCII, none of `-_`, exactly the bytes the length promises (anything skipped or
 * stopped at makes fewer), and the last group re-encoded as it came. Each check is one native
 * pass; re-encoding the whole text instead made a second string as large as the first.
 */
function parseBase64Native(native: BufferLike, text: string): Uint8Array | null {
  const buf = native.allocUnsafeSlow(decodedLength(text));
  const written = decodeCanonicalInto(native, text, buf as NativeTarget, 0);
  return written < 0 ? null : new Uint8Array(buf.buffer, buf.byteOffset, written);
}

/**
 * Decodes `text` (its length a multiple of 4) into `target` at `offset` with Node's decoder and
 * the checks above; returns the bytes written, or -1 when the text is not canonical.
 */
function decodeCanonicalInto(native: BufferLike, text: string, target: NativeTarget, offset: number): number {
  if (native.byteLength(text, 'utf8') !== text.length) return -1;
  if (text.includes('-') || text.includes('_')) return -1;
  const room = decodedLength(text);
  const written = room === 0 ? 0 : target.write(text, offset, room, 'base64');
  if (written !== room) return -1;
  if (room === 0) return 0;
  const lastGroup = target.subarray(offset + room - (3 - ((text.length / 4) * 3 - room)), offset + room);
  return encodeBase64(lastGroup) === text.slice(-4) ? room : -1;
}

/** What base64 text of a length that is a multiple of 4 promises, by its padding. */
function decodedLength(text: string): number {
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return Math.max(0, (text.length / 4) * 3 - padding);
}

/**
 * `parseBase64` of the text held as ASCII bytes in `source[start, end)`, or null when it is not
 * canonical base64. With a native Buffer: a copy as a one-byte string, then the native decoder
 * (faster than decoding in JavaScript); elsewhere decoded from the bytes in JavaScript.
 */
export function parseBase64Bytes(source: Uint8Array, start: number, end: number): Uint8Array | null {
  if (!NativeBuffer) return parseBase64Ascii(source, start, end) ?? null;
  return parseBase64(
    NativeBuffer.from(source.buffer, source.byteOffset + start, end - start).toString('latin1'),
  );
}

/**
 * `parseBase64Bytes` into memory the caller owns: decodes the canonical base64 in
 * `source[start, end)` into `target` at `offset` and returns how many bytes it wrote, or -1 when
 * the text is not canonical (nothing is promised about `target` then). `target` needs room for
 * {@link base64DecodedLength} bytes.
 */
export function parseBase64BytesInto(
  source: Uint8Array,
  start: number,
  end: number,
  target: Uint8Array,
  offset: number,
): number {
  if ((end - start) % 4 !== 0) return -1;
  if (!NativeBuffer || !(target instanceof (NativeBuffer as unknown as typeof Uint8Array))) {
    const bytes = parseBase64Ascii(source, start, end);
    if (bytes === undefined) return -1;
    target.set(bytes, offset);
    return bytes.byteLength;
  }
  const text = NativeBuffer.from(source.buffer, source.byteOffset + start, end - start).toString('latin1');
  return decodeCanonicalInto(NativeBuffer, text, target as NativeTarget, offset);
}

type NativeTarget = Uint8Array & {
  write(text: string, offset: number, length: number, encoding: string): number;
};

/**
 * How many bytes the base64 in `source[start, end)` decodes to, judged by its length and
 * padding only; -1 when its length is not a multiple of 4.
 */
export function base64DecodedLength(source: Uint8Array, start: number, end: number): number {
  const length = end - start;
  if (length % 4 !== 0) return -1;
  const pad = length === 0 || source[end - 1] !== 0x3d ? 0 : source[end - 2] === 0x3d ? 2 : 1;
  return (length / 4) * 3 - pad;
}

/** Decodes standard padded base64; the caller checks `isBase64` first (else see `parseBase64`). */
export function decodeBase64(text: string): Uint8Array {
  return NativeBuffer ? decodeNative(NativeBuffer, text) : decodeBase64Portable(text);
}

function decodeNative(native: BufferLike, text: string): Uint8Array {
  // Decoded into memory of its own, uninitialised (`Buffer.from` zero-fills a fresh allocation
  // first: for megabytes, twice the page faults), exactly as long as the text promises; if junk
  // made fewer bytes (lenient decoding), only those are copied out.
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const room = Math.max(0, Math.floor((text.length * 3) / 4) - padding);
  const buf = native.allocUnsafeSlow(room);
  const written = room === 0 ? 0 : buf.write(text, 0, room, 'base64');
  return written === room
    ? new Uint8Array(buf.buffer, buf.byteOffset, written)
    : new Uint8Array(buf.subarray(0, written));
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The bytes of a string of ASCII (one byte per character; for fixed tokens of the wire). */
export function asciiBytes(text: string): Uint8Array {
  return Uint8Array.from(text, (c) => c.charCodeAt(0));
}

/** UTF-8 encode a string. */
export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/** UTF-8 decode bytes, replacing invalid sequences with U+FFFD. */
export function fromUtf8(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}
