// Base64 and UTF-8 helpers without Node APIs (this package runs in browsers and workers too).
// Standard alphabet with padding: the JSON codec's dialect, as the original exec-server.
import { BASE64_LOOKUP, decodeBase64Portable, encodeBase64Portable } from './internal/base64-portable.ts';

type BufferLike = {
  from(data: ArrayBufferLike, byteOffset: number, length: number): { toString(encoding: string): string };
  from(data: string, encoding: string): Uint8Array;
};
// Use the host's native implementation when there is one (Node's Buffer is ~10x faster).
const NativeBuffer = (globalThis as { Buffer?: BufferLike }).Buffer;

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
  const length = text.length;
  if (length % 4 !== 0) return false;
  const pad =
    length === 0
      ? 0
      : text.charCodeAt(length - 1) !== 0x3d
        ? 0
        : text.charCodeAt(length - 2) === 0x3d
          ? 2
          : 1;
  const dataEnd = length - pad;
  for (let i = 0; i < dataEnd; i++) {
    const c = text.charCodeAt(i);
    if (c >= 128 || BASE64_LOOKUP[c] === -1) return false;
  }
  if (pad === 0) return true;
  const last = BASE64_LOOKUP[text.charCodeAt(dataEnd - 1)]!;
  // One pad char: the last symbol carries 2 unused bits; two pad chars: 4 unused bits.
  return (last & (pad === 1 ? 0x03 : 0x0f)) === 0;
}

/**
 * Decodes standard padded base64; the caller checks `isBase64` first. The result is a plain
 * `Uint8Array` that owns its buffer (never a view into a shared pool).
 */
export function decodeBase64(text: string): Uint8Array {
  if (NativeBuffer) {
    const buf = NativeBuffer.from(text, 'base64');
    // Small Buffers are slices of a shared 8 KiB pool; copy those so `.buffer` is ours alone.
    return buf.byteOffset === 0 && buf.byteLength === buf.buffer.byteLength
      ? new Uint8Array(buf.buffer, 0, buf.byteLength)
      : new Uint8Array(buf);
  }
  return decodeBase64Portable(text);
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
