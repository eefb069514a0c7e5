const encoder = new TextEncoder();
// ignoreBOM keeps a leading U+FEFF as the original's `String::from_utf8_lossy` does.
const lossyDecoder = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * Decodes bytes as UTF-8, replacing each maximal malformed subsequence with U+FFFD, which is
 * what Rust's `String::from_utf8_lossy` does (both follow the Unicode substitution practice).
 */
export function decodeUtf8Lossy(bytes: Uint8Array): string {
  return lossyDecoder.decode(bytes);
}

/** UTF-8 encoding of a string (lone surrogates become U+FFFD). */
export function encodeUtf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/** Byte length of a string's UTF-8 encoding, without allocating it. */
export function utf8ByteLength(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/** True when `index` starts a character (or is the end) of well-formed UTF-8 `bytes`. */
export function isCharBoundary(bytes: Uint8Array, index: number): boolean {
  if (index <= 0 || index >= bytes.length) return true;
  return ((bytes[index] as number) & 0xc0) !== 0x80;
}

/** Number of characters in well-formed UTF-8 `bytes[start, end)`. */
export function countChars(bytes: Uint8Array, start: number, end: number): number {
  let chars = 0;
  for (let i = start; i < end; i++) if (((bytes[i] as number) & 0xc0) !== 0x80) chars++;
  return chars;
}

/** Lines as Rust's `str::lines()` counts them: a trailing newline does not start a new line. */
export function countLines(text: string): number {
  if (text.length === 0) return 0;
  let newlines = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) newlines++;
  return text.endsWith('\n') ? newlines : newlines + 1;
}
