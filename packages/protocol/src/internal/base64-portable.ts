// Standard padded base64 in plain JavaScript, for hosts without Node's Buffer (browsers, workers).
// `bytes.ts` picks the host's native implementation when there is one; tests run both.

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Sextet value of each byte value, -1 for characters outside the standard alphabet. */
const BASE64_LOOKUP: Int16Array = new Int16Array(256).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) BASE64_LOOKUP[ALPHABET.charCodeAt(i)] = i;

/** Encodes bytes as standard padded base64 without host APIs. */
export function encodeBase64Portable(bytes: Uint8Array): string {
  // Build in pieces: one string concatenation per byte triple is slow on large inputs.
  const parts: string[] = [];
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]! + ALPHABET[n & 63]!;
    if (out.length >= 8192) {
      parts.push(out);
      out = '';
    }
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i]! << 16;
    out += `${ALPHABET[n >> 18]!}${ALPHABET[(n >> 12) & 63]!}==`;
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8);
    out += `${ALPHABET[n >> 18]!}${ALPHABET[(n >> 12) & 63]!}${ALPHABET[(n >> 6) & 63]!}=`;
  }
  parts.push(out);
  return parts.join('');
}

/** True when `text` is canonical standard padded base64 (see `isBase64` in bytes.ts). */
export function isBase64Portable(text: string): boolean {
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

/** Decodes standard padded base64 without host APIs; the caller has checked `isBase64` first. */
export function decodeBase64Portable(text: string): Uint8Array {
  const pad = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const out = new Uint8Array((text.length / 4) * 3 - pad);
  let o = 0;
  for (let i = 0; i < text.length; i += 4) {
    const n =
      (BASE64_LOOKUP[text.charCodeAt(i)]! << 18) |
      (BASE64_LOOKUP[text.charCodeAt(i + 1)]! << 12) |
      ((BASE64_LOOKUP[text.charCodeAt(i + 2)]! & 63) << 6) |
      (BASE64_LOOKUP[text.charCodeAt(i + 3)]! & 63);
    if (o < out.length) out[o++] = n >> 16;
    if (o < out.length) out[o++] = (n >> 8) & 255;
    if (o < out.length) out[o++] = n & 255;
  }
  return out;
}

/**
 * Decodes canonical standard padded base64 held as bytes in `source[start, end)` (what
 * `isBase64Portable` accepts), or undefined when it is not: for a payload still inside a frame.
 */
export function parseBase64Ascii(source: Uint8Array, start: number, end: number): Uint8Array | undefined {
  const length = end - start;
  if (length % 4 !== 0) return undefined;
  const pad = length === 0 || source[end - 1] !== 0x3d ? 0 : source[end - 2] === 0x3d ? 2 : 1;
  const out = new Uint8Array((length / 4) * 3 - pad);
  const full = end - (pad === 0 ? 0 : 4);
  let o = 0;
  let i = start;
  for (; i < full; i += 4) {
    const n =
      (BASE64_LOOKUP[source[i]!]! << 18) |
      (BASE64_LOOKUP[source[i + 1]!]! << 12) |
      (BASE64_LOOKUP[source[i + 2]!]! << 6) |
      BASE64_LOOKUP[source[i + 3]!]!;
    if (n < 0) return undefined; // a -1 anywhere makes the whole value negative
    out[o++] = n >> 16;
    out[o++] = (n >> 8) & 255;
    out[o++] = n & 255;
  }
  if (pad === 0) return out;
  const a = BASE64_LOOKUP[source[i]!]!;
  const b = BASE64_LOOKUP[source[i + 1]!]!;
  const c = pad === 1 ? BASE64_LOOKUP[source[i + 2]!]! : 0;
  if (a < 0 || b < 0 || c < 0) return undefined;
  const n = (a << 18) | (b << 12) | (c << 6);
  // One pad char: the last symbol carries 2 unused bits; two pad chars: 4 unused bits.
  if ((pad === 1 ? n & 0xff : n & 0xffff) !== 0) return undefined;
  out[o++] = n >> 16;
  if (pad === 1) out[o] = (n >> 8) & 255;
  return out;
}
