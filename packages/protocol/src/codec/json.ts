import { encodeBase64 } from '../bytes.ts';
import { FrameDecodeError } from '../errors.ts';
import { LARGE_JSON_STRING_BYTES, parseWithLargeStrings } from './json-large-strings.ts';
import type { DecodeLimits } from './limits.ts';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * One pass over JSON text enforcing the limits JSON.parse cannot: total values, nesting depth and
 * duplicate object keys (refused as the original does). Syntax is left to JSON.parse, which runs
 * only after this accepts, so a hostile frame never builds a large object graph.
 */
function scanJson(text: string, limits: DecodeLimits): void {
  let values = 0;
  // One entry per open container: a Set of keys for objects, null for arrays.
  const stack: (Set<string> | null)[] = [];
  let expectKey = false;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // Find the closing quote, skipping escapes.
      let j = i + 1;
      let escaped = false;
      for (;;) {
        j = text.indexOf('"', j);
        if (j < 0) return; // unterminated: JSON.parse reports it
        let backslashes = 0;
        for (let k = j - 1; k > i && text.charCodeAt(k) === BACKSLASH; k--) backslashes++;
        if (backslashes % 2 === 0) break;
        escaped = true;
        j++;
      }
      const top = stack[stack.length - 1];
      if (expectKey && top) {
        const raw = text.slice(i + 1, j);
        let key = raw;
        if (escaped || raw.includes('\\')) {
          try {
            key = JSON.parse(`"${raw}"`) as string;
          } catch {
            return; // JSON.parse reports the syntax error
          }
        }
        if (top.has(key))
          throw new FrameDecodeError('invalidRequest', `duplicate JSON object key \`${key}\``);
        top.add(key);
        expectKey = false;
      } else {
        if (j - i - 1 > limits.maxStringLength) {
          throw new FrameDecodeError('invalidRequest', `JSON string longer than ${limits.maxStringLength}`);
        }
        values++;
      }
      i = j;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      values++;
      if (stack.length >= limits.maxDepth) {
        throw new FrameDecodeError(
          'invalidRequest',
          `JSON-RPC message exceeds the nesting limit of ${limits.maxDepth}`,
        );
      }
      stack.push(c === 0x7b ? new Set() : null);
      expectKey = c === 0x7b;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
      expectKey = false;
    } else if (c === 0x2c /* , */) {
      expectKey = stack[stack.length - 1] != null;
    } else if (c === 0x3a /* : */) {
      expectKey = false;
    } else if ((c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x74 || c === 0x66 || c === 0x6e) {
      // number, true, false, null: count once, skip the rest of the token
      values++;
      while (i + 1 < n) {
        const d = text.charCodeAt(i + 1);
        if (
          d === 0x2c ||
          d === 0x7d ||
          d === 0x5d ||
          d === 0x20 ||
          d === 0x0a ||
          d === 0x0d ||
          d === 0x09 ||
          d === 0x3a
        )
          break;
        i++;
      }
    }
    if (values > limits.maxValues) {
      throw new FrameDecodeError(
        'invalidRequest',
        `JSON-RPC message exceeds the limit of ${limits.maxValues} JSON values`,
      );
    }
  }
}

const textDecoder = new TextDecoder('utf-8', { fatal: true });
const textEncoder = new TextEncoder();

/**
 * Decodes one JSON frame (text or UTF-8 bytes) into a plain value, enforcing the limits. Byte
 * fields stay base64 strings here, and the `Bytes` schema turns them into `Uint8Array`s; with
 * `bytesFields`, a large one in a request or notification whose method reads it as bytes
 * (`process/write`, `fs/writeFile`, `fs/writeBlock`) arrives decoded already, when it is
 * canonical base64 (see `json-large-strings.ts`).
 */
export function decodeJson(frame: string | Uint8Array, limits: DecodeLimits, bytesFields = false): unknown {
  const size = typeof frame === 'string' ? frame.length : frame.byteLength;
  if (size > limits.maxFrameBytes) {
    throw new FrameDecodeError(
      'invalidRequest',
      `JSON-RPC message of ${size} bytes exceeds maximum length of ${limits.maxFrameBytes} bytes`,
    );
  }
  if (typeof frame !== 'string' && size >= LARGE_JSON_STRING_BYTES) {
    const parsed = parseWithLargeStrings(
      frame,
      limits.maxStringLength,
      (text) => {
        scanJson(text, limits);
        return JSON.parse(text);
      },
      bytesFields,
    );
    if (parsed !== undefined) return parsed;
  }
  let text: string;
  if (typeof frame === 'string') text = frame;
  else {
    try {
      text = textDecoder.decode(frame);
    } catch (cause) {
      throw new FrameDecodeError('invalidRequest', 'JSON-RPC message is not valid UTF-8', { cause });
    }
  }
  scanJson(text, limits);
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new FrameDecodeError('invalidRequest', (cause as Error).message, { cause });
  }
}

/**
 * Copies `value` with every `Uint8Array` (Node Buffers included) replaced by `bytes(u8)`, which
 * returns the string to put there. Plain values only; anything with `toJSON` is left as it is.
 */
function replaceBytes(value: unknown, bytes: (u8: Uint8Array) => string): unknown {
  if (value instanceof Uint8Array) return bytes(value);
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((item) => replaceBytes(item, bytes));
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return value;
  // A null prototype, so that an own `__proto__` member is copied as data, not as a prototype.
  const copy = Object.create(null) as Record<string, unknown>;
  for (const key of Object.keys(value))
    copy[key] = replaceBytes((value as Record<string, unknown>)[key], bytes);
  return copy;
}

// JSON.stringify scans every character of a string for escapes, and base64 never needs any: each
// byte field is written as a short placeholder and its base64 spliced in afterwards (about 3x
// faster for a 64 KiB chunk on Node 20). The NULs make the placeholder `"\u0000execd-bytes:N\u0000"`.
const PLACEHOLDERS = /"\\u0000execd-bytes:(\d+)\\u0000"/g;

/** Encodes a wire object as JSON text; bytes become standard padded base64. */
export function encodeJsonText(message: unknown): string {
  const encoded: string[] = [];
  const text = JSON.stringify(
    replaceBytes(message, (u8) => `\u0000execd-bytes:${encoded.push(encodeBase64(u8)) - 1}\u0000`),
  );
  if (encoded.length === 0) return text;
  // Our placeholders appear exactly once each, in order. Any other match (a string of the message
  // that happens to look like one) breaks the 0..n-1 sequence: then take the plain, slow path.
  let next = 0;
  let clean = true;
  const spliced = text.replace(PLACEHOLDERS, (match, index: string) => {
    if (!clean || next >= encoded.length || Number(index) !== next) {
      clean = false;
      return match;
    }
    return `"${encoded[next++]!}"`;
  });
  if (clean && next === encoded.length) return spliced;
  return JSON.stringify(replaceBytes(message, encodeBase64));
}

/** Encodes a wire object as UTF-8 JSON bytes. */
export function encodeJson(message: unknown): Uint8Array {
  return textEncoder.encode(encodeJsonText(message));
}
