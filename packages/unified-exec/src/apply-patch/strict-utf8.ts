/** Bytes that are not UTF-8; `message` is Rust's `Utf8Error` text. */
export class Utf8DecodeError extends Error {
  override name = 'Utf8DecodeError';
}

const FATAL_DECODER = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Decodes UTF-8 strictly, as Rust's `String::from_utf8`; on invalid input throws
 * {@link Utf8DecodeError} with Rust's text: `invalid utf-8 sequence of N bytes from index I`, or
 * `incomplete utf-8 byte sequence from index I` when the input ends inside a character.
 * A byte-order mark is kept (Rust keeps it).
 */
export function decodeUtf8Strict(bytes: Uint8Array): string {
  try {
    return FATAL_DECODER.decode(bytes);
  } catch {
    const { validUpTo, errorLength } = firstUtf8Error(bytes);
    throw new Utf8DecodeError(
      errorLength === undefined
        ? `incomplete utf-8 byte sequence from index ${validUpTo}`
        : `invalid utf-8 sequence of ${errorLength} bytes from index ${validUpTo}`,
    );
  }
}

// Rust's `run_utf8_validation`: the offset of the first bad sequence and how many bytes it spans
// (undefined when the input ends before the sequence is complete).
function firstUtf8Error(bytes: Uint8Array): { validUpTo: number; errorLength: number | undefined } {
  let index = 0;
  const at = (offset: number): number | undefined => bytes[index + offset];
  const isContinuation = (byte: number | undefined): boolean => byte !== undefined && (byte & 0xc0) === 0x80;
  while (index < bytes.length) {
    const first = bytes[index] as number;
    if (first < 0x80) {
      index++;
      continue;
    }
    const width =
      first >= 0xc2 && first <= 0xdf
        ? 2
        : first >= 0xe0 && first <= 0xef
          ? 3
          : first >= 0xf0 && first <= 0xf4
            ? 4
            : 0;
    if (width === 0) return { validUpTo: index, errorLength: 1 };
    // The second byte's allowed range depends on the first (no overlongs, surrogates or > U+10FFFF).
    const second = at(1);
    if (second === undefined) return { validUpTo: index, errorLength: undefined };
    const [low, high] =
      first === 0xe0
        ? [0xa0, 0xbf]
        : first === 0xed
          ? [0x80, 0x9f]
          : first === 0xf0
            ? [0x90, 0xbf]
            : first === 0xf4
              ? [0x80, 0x8f]
              : [0x80, 0xbf];
    if (second < low || second > high) return { validUpTo: index, errorLength: 1 };
    for (let offset = 2; offset < width; offset++) {
      const next = at(offset);
      if (next === undefined) return { validUpTo: index, errorLength: undefined };
      if (!isContinuation(next)) return { validUpTo: index, errorLength: offset };
    }
    index += width;
  }
  return { validUpTo: index, errorLength: undefined };
}
