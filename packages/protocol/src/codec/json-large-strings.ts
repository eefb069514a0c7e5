// The JSON codec's path for frames carrying large strings (a `process/write` of megabytes, an
// `fs/writeFile` of a large file): the frame is parsed with each large string cut out, so the
// whole frame never becomes one JavaScript string and the large ones never go through
// `JSON.parse`; a base64 payload in a field the schema reads as bytes is decoded straight from
// the frame's bytes. Each of those copies is a string as large as the payload, which the engine
// allocates fresh (on a VM, page faults cost most of a large frame's decoding) and leaves as
// garbage. Anything unusual returns undefined and the caller takes the ordinary path, so
// results and errors are exactly the ordinary path's.
import { parseBase64Ascii } from '../internal/base64-portable.ts';

/** Strings at least this long (in bytes, between the quotes) are cut out. */
export const LARGE_JSON_STRING_BYTES = 64 * 1024;

/** The params field each client request reads as bytes (standard padded base64 on the JSON codec). */
export const BYTES_FIELDS: Readonly<Record<string, string>> = {
  'process/write': 'chunk',
  'fs/writeFile': 'dataBase64',
  'fs/writeBlock': 'chunk',
  'http/request': 'bodyBase64',
};

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;

/** Unguessable per process: a string of the frame can never be taken for a cut-out one. */
const TAG = `execd-large-string:${randomTag()}:`;
/** A mark as parsed, and as written into the text (a NUL, escaped as JSON requires). */
const MARK = `\u0000${TAG}`;
const MARK_JSON = `\\u0000${TAG}`;

function randomTag(): string {
  const bytes = new Uint8Array(12);
  globalThis.crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The frame's text with large strings replaced by marks, and where each one was. */
interface CutFrame {
  readonly text: string;
  readonly spans: readonly (readonly [start: number, end: number])[];
}

/**
 * Parses `frame` with its large string values cut out; undefined when it has none or anything is
 * unusual (escapes or control characters in them, invalid UTF-8, a syntax error, a string over
 * `maxStringLength`): the ordinary path then decides, with its own errors. `parse` is the
 * ordinary path's checks and `JSON.parse`, run on the shortened text.
 */
export function parseWithLargeStrings(
  frame: Uint8Array,
  maxStringLength: number,
  parse: (text: string) => unknown,
  bytesFields: boolean,
): unknown {
  const cut = cutLargeStrings(frame, maxStringLength);
  if (cut === undefined) return undefined;
  let value: unknown;
  try {
    value = parse(cut.text);
  } catch {
    return undefined;
  }
  const used = new Set<number>();
  if (bytesFields) decodeBytesField(value, frame, cut, used);
  const restored = restoreStrings(value, frame, cut, used);
  return restored.ok ? restored.value : undefined;
}

function cutLargeStrings(frame: Uint8Array, maxStringLength: number): CutFrame | undefined {
  const spans: [number, number][] = [];
  let pos = 0;
  for (;;) {
    const open = frame.indexOf(QUOTE, pos);
    if (open < 0) break;
    let close = open + 1;
    for (;;) {
      close = frame.indexOf(QUOTE, close);
      if (close < 0) return undefined; // unterminated: the ordinary path reports it
      let backslashes = 0;
      for (let k = close - 1; k > open && frame[k] === BACKSLASH; k--) backslashes++;
      if (backslashes % 2 === 0) break;
      close++;
    }
    pos = close + 1;
    if (close - open - 1 < LARGE_JSON_STRING_BYTES) continue;
    if (close - open - 1 > maxStringLength) return undefined;
    const backslash = frame.indexOf(BACKSLASH, open + 1);
    if (backslash >= 0 && backslash < close) return undefined;
    let next = close + 1;
    while (
      next < frame.length &&
      (frame[next] === 0x20 || frame[next] === 0x0a || frame[next] === 0x0d || frame[next] === 0x09)
    )
      next++;
    if (frame[next] === COLON) return undefined; // a key that large: leave it to the ordinary path
    spans.push([open + 1, close]);
  }
  if (spans.length === 0) return undefined;
  let text = '';
  let from = 0;
  try {
    for (const [index, [start, end]] of spans.entries()) {
      text += utf8.decode(frame.subarray(from, start)) + MARK_JSON + index;
      from = end;
    }
    text += utf8.decode(frame.subarray(from));
  } catch {
    return undefined;
  }
  return { text, spans };
}

/** The index of the cut-out string `value` stands for, if it is a mark. */
function markIndex(value: unknown, cut: CutFrame): number | undefined {
  if (typeof value !== 'string' || !value.startsWith(MARK)) return undefined;
  const index = Number(value.slice(MARK.length));
  return Number.isInteger(index) && index >= 0 && index < cut.spans.length ? index : undefined;
}

/** A request or notification's bytes field, decoded from the frame when it is canonical base64. */
function decodeBytesField(value: unknown, frame: Uint8Array, cut: CutFrame, used: Set<number>): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return;
  const { method, params } = value as { method?: unknown; params?: unknown };
  if (typeof method !== 'string' || typeof params !== 'object' || params === null) return;
  const field = Object.hasOwn(BYTES_FIELDS, method) ? BYTES_FIELDS[method] : undefined;
  if (field === undefined || !Object.hasOwn(params, field)) return;
  const index = markIndex((params as Record<string, unknown>)[field], cut);
  if (index === undefined) return;
  const [start, end] = cut.spans[index] as readonly [number, number];
  const bytes = parseBase64Ascii(frame, start, end);
  if (bytes === undefined) return; // not base64: the string goes back, the schema refuses it
  (params as Record<string, unknown>)[field] = bytes;
  used.add(index);
}

/** Every other mark back to its string; not ok when one is not a valid JSON string's content. */
function restoreStrings(
  value: unknown,
  frame: Uint8Array,
  cut: CutFrame,
  used: Set<number>,
): { ok: boolean; value: unknown } {
  let ok = true;
  const restore = (item: unknown): unknown => {
    const index = markIndex(item, cut);
    if (index !== undefined) {
      if (used.has(index)) return item; // two marks of one string cannot come from the frame
      used.add(index);
      const [start, end] = cut.spans[index] as readonly [number, number];
      const text = stringContent(frame, start, end);
      if (text === undefined) ok = false;
      return text;
    }
    if (typeof item !== 'object' || item === null || item instanceof Uint8Array) return item;
    if (Array.isArray(item)) {
      for (let i = 0; i < item.length; i++) item[i] = restore(item[i]);
      return item;
    }
    const record = item as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const before = record[key];
      const after = restore(before);
      // defineProperty: an own `__proto__` key (JSON.parse makes one) must stay a plain property.
      if (after !== before)
        Object.defineProperty(record, key, {
          value: after,
          writable: true,
          enumerable: true,
          configurable: true,
        });
    }
    return item;
  };
  const restored = restore(value);
  return { ok: ok && used.size === cut.spans.length, value: restored };
}

/** The string a JSON string literal without escapes stands for; undefined if JSON forbids it. */
function stringContent(frame: Uint8Array, start: number, end: number): string | undefined {
  let text: string;
  try {
    text = utf8.decode(frame.subarray(start, end));
  } catch {
    return undefined;
  }
  // Unescaped control characters are what JSON forbids in a string.
  return /[\u0000-\u001f]/.test(text) ? undefined : text;
}
