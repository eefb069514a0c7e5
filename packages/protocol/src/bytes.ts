// Base64 and UTF-8 helpers without Node APIs (this package runs in browsers and workers too).
// Standard alphabet with padding: the JSON codec's dialect, as the original exec-server.
import { decodeBase64Portable, encodeBase64Portable, isBase64Portable } from './internal/base64-portable.ts';

type BufferLike = {
  from(data: ArrayBufferLike, byteOffset: number, length: number): { toString(encoding: string): string };
  from(data: string, encoding: string): Uint8Array;
};
// Use the host's native implementation when there is one (Node's Buffer is ~10x faster).
const NativeBuffer = (globalThis as { Buffer?: BufferLike }).Buffer;

/**
 * `prefix`, the base64 of `bytes`, then `suffix`, as UTF-8 bytes in one allocation (no string
 * concatenation, no second encoding pass on Node; the portable fallback encodes the joined text).
 */
export function utf8WithBase64(prefix: string, bytes: Uint8Array, suffix: string): Uint8Array {
  const native = NativeBuffer as unknown as NativeWriteBuffer | undefined;
  if (native?.allocUnsafe === undefined)
    return new TextEncoder().encode(prefix + encodeBase64(bytes) + suffix);
  const b64 = encodeBase64(bytes);
  const head = native.byteLength(prefix, 'utf8');
  const tail = native.byteLength(suffix, 'utf8');
  const out = native.allocUnsafe(head + b64.length + tail);
  out.write(prefix, 0, head, 'utf8');
  out.write(b64, head, b64.length, 'latin1');
  out.write(suffix, head + b64.length, tail, 'utf8');
  return out;
}

type NativeWriteBuffer = {
  allocUnsafe(size: number): Uint8Array & {
    write(text: string, offset: number, length: number, encoding: string): number;
  };
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
  if (NativeBuffer) {
    // Node's decoder is lenient (skips whitespace and junk, reads `-_` as `+/`, ignores trailing
    // bits); re-encoding and comparing is both the strict check and the fastest one here.
    const bytes = decodeNative(NativeBuffer, text);
    return encodeBase64(bytes) === text ? bytes : null;
  }
  return isBase64Portable(text) ? decodeBase64Portable(text) : null;
}

/** Decodes standard padded base64; the caller checks `isBase64` first (else see `parseBase64`). */
export function decodeBase64(text: string): Uint8Array {
  return NativeBuffer ? decodeNative(NativeBuffer, text) : decodeBase64Portable(text);
}

function decodeNative(native: BufferLike, text: string): Uint8Array {
  const buf = native.from(text, 'base64');
  // Small Buffers are slices of a shared 8 KiB pool; copy those so `.buffer` is ours alone.
  return buf.byteOffset === 0 && buf.byteLength === buf.buffer.byteLength
    ? new Uint8Array(buf.buffer, 0, buf.byteLength)
    : new Uint8Array(buf);
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** UTF-8 encode a string. */
export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/** UTF-8 decode bytes, replacing invalid sequences with U+FFFD. */
export function fromUtf8(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}
