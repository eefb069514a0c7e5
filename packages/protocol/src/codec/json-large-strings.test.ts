import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { encodeBase64, parseBase64 } from '../bytes.ts';
import { parseBase64Ascii } from '../internal/base64-portable.ts';
import { METHODS } from '../methods.ts';
import { Bytes } from '../schemas/common.ts';
import { decodeJson } from './json.ts';
import { BYTES_FIELDS, LARGE_JSON_STRING_BYTES } from './json-large-strings.ts';
import { DEFAULT_DECODE_LIMITS, resolveLimits } from './limits.ts';

const LARGE = LARGE_JSON_STRING_BYTES;
const bytesOf = (text: string) => new TextEncoder().encode(text);

/** The ordinary path's answer: a text frame never takes the large-string path. */
function ordinary(text: string, limits = DEFAULT_DECODE_LIMITS): { value?: unknown; error?: string } {
  try {
    return { value: decodeJson(text, limits) };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

function viaBytes(text: string, limits = DEFAULT_DECODE_LIMITS, bytesFields = false) {
  try {
    return { value: decodeJson(bytesOf(text), limits, bytesFields) };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

/** Large string contents of every kind the path must cut out, or leave to the ordinary one. */
const largeContent = fc.oneof(
  fc.uint8Array({ minLength: 49_152, maxLength: 60_000 }).map((b) => encodeBase64(b)), // base64
  fc.constantFrom('A', 'é', '日本', '🙂', 'x y').map((unit) => unit.repeat(LARGE)), // UTF-8 text
  fc.constantFrom('\\n', '\\"', '\\u0000', '\\\\').map((sequence) => `${'a'.repeat(LARGE)}${sequence}b`), // escapes
  fc.constantFrom('\n', '\u0001', '\u001f').map((control) => `${'a'.repeat(LARGE)}${control}`), // invalid JSON
);

describe('large strings in JSON frames', () => {
  test('decode to exactly what the ordinary path gives, value or error', () => {
    fc.assert(
      fc.property(
        fc.array(largeContent, { minLength: 1, maxLength: 3 }),
        fc.constantFrom('value', 'array', 'key', 'nested'),
        (contents, shape) => {
          const parts = contents.map((content, i) => {
            if (shape === 'array') return `"a${i}": [1, "${content}", null]`;
            if (shape === 'key') return `"${content}": ${i}`;
            if (shape === 'nested') return `"n${i}": {"deep": {"s": "${content}"}}`;
            return `"s${i}" : "${content}"`;
          });
          const text = `{"id": 1, "method": "x", "params": {${parts.join(', ')}}}`;
          expect(viaBytes(text)).toEqual(ordinary(text));
        },
      ),
      { numRuns: 60 },
    );
  });

  test('a bytes field of a known method arrives decoded when it is canonical base64', () => {
    const payload = new Uint8Array(200_000).map((_, i) => (i * 13) & 0xff);
    for (const [method, field] of [
      ['process/write', 'chunk'],
      ['fs/writeFile', 'dataBase64'],
      ['fs/writeBlock', 'chunk'],
      ['http/request', 'bodyBase64'],
    ] as const) {
      const message = { id: 7, method, params: { [field]: encodeBase64(payload), path: 'p'.repeat(LARGE) } };
      const decoded = viaBytes(JSON.stringify(message), DEFAULT_DECODE_LIMITS, true).value as {
        params: Record<string, unknown>;
      };
      expect(decoded.params[field]).toBeInstanceOf(Uint8Array);
      expect(decoded.params[field]).toEqual(payload);
      expect(decoded.params.path).toBe('p'.repeat(LARGE)); // other fields stay strings
      // Without bytesFields (a plain value), or for another method, it stays the string.
      expect(viaBytes(JSON.stringify(message)).value).toEqual(message);
      const other = { ...message, method: 'process/start' };
      expect(viaBytes(JSON.stringify(other), DEFAULT_DECODE_LIMITS, true).value).toEqual(other);
    }
  });

  test('a bytes field that is not canonical base64 stays the string, for the schema to refuse', () => {
    const canonical = encodeBase64(new Uint8Array(60_000).fill(1));
    for (const bad of [
      `${canonical.slice(0, -4)}QR==`,
      `${canonical}A`,
      `${canonical.slice(0, -1)}-`,
      `${canonical} `,
    ]) {
      const message = { id: 1, method: 'process/write', params: { processId: 'p', chunk: bad } };
      expect(viaBytes(JSON.stringify(message), DEFAULT_DECODE_LIMITS, true).value).toEqual(message);
    }
  });

  test('an own __proto__ key keeps its large value as a plain property', () => {
    const text = `{"id": 1, "method": "x", "params": {"__proto__": "${'z'.repeat(LARGE)}"}}`;
    const decoded = viaBytes(text).value as { params: Record<string, unknown> };
    expect(Object.getPrototypeOf(decoded.params)).toBe(Object.prototype);
    expect(Object.hasOwn(decoded.params, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(decoded.params, '__proto__')?.value).toBe('z'.repeat(LARGE));
    expect(viaBytes(text)).toEqual(ordinary(text));
  });

  test('limits and syntax errors are the ordinary path’s', () => {
    const limits = resolveLimits({ maxStringLength: LARGE + 10 });
    const tooLong = `{"id": 1, "method": "x", "params": {"s": "${'a'.repeat(LARGE + 11)}"}}`;
    expect(viaBytes(tooLong, limits).error).toBe(ordinary(tooLong, limits).error);
    expect(viaBytes(tooLong, limits).error).toMatch(/longer than/);
    for (const broken of [
      `{"id": 1, "params": {"s": "${'a'.repeat(LARGE)}"}`, // unclosed object
      `{"id": 1, "params": {"s": "${'a'.repeat(LARGE)}}`, // unterminated string
      `{"id": 1, "params": {"s": "${'a'.repeat(LARGE)}", "s": 2}}`, // duplicate key
      `{"id": 1, "params": {"s": "${'a'.repeat(LARGE)}"} x}`,
    ]) {
      expect(viaBytes(broken).error).toBeDefined();
      expect(viaBytes(broken)).toEqual(ordinary(broken));
    }
    const invalidUtf8 = new Uint8Array([...bytesOf(`{"s": "${'a'.repeat(LARGE)}`), 0xff, ...bytesOf('"}')]);
    expect(() => decodeJson(invalidUtf8, DEFAULT_DECODE_LIMITS)).toThrow(
      'JSON-RPC message is not valid UTF-8',
    );
  });

  test('a small string looking like a cut-out mark is left alone', () => {
    const text = `{"a": "\\u0000execd-large-string:00:0", "b": "${'b'.repeat(LARGE)}"}`;
    expect(viaBytes(text)).toEqual(ordinary(text));
  });
});

test('each field decoded early is one its method reads as bytes', () => {
  // The field's schema is Bytes, optional Bytes, or a union with Bytes (fs/writeFile keeps bad
  // base64 a string, for the handler's own error).
  const readsBytes = (schema: unknown): boolean => {
    if (schema === Bytes) return true;
    const { wrapped, options } = schema as { wrapped?: unknown; options?: unknown[] };
    return (wrapped !== undefined && readsBytes(wrapped)) || (options?.some(readsBytes) ?? false);
  };
  for (const [method, field] of Object.entries(BYTES_FIELDS)) {
    const entry = METHODS[method as keyof typeof METHODS] as { params: { entries: Record<string, unknown> } };
    expect(readsBytes(entry.params.entries[field]), `${method} ${field}`).toBe(true);
  }
});

describe('parseBase64Ascii', () => {
  test('agrees with the strict decoder on valid and broken base64', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 64 }),
        fc.nat(90),
        fc.constantFrom('', 'A', '=', '-', ' ', '\u00e9'),
        (b, at, c) => {
          const valid = encodeBase64(b);
          const text = c === '' ? valid : valid.slice(0, at) + c + valid.slice(at + 1);
          const frame = bytesOf(`"${text}"`);
          const decoded = parseBase64Ascii(frame, 1, frame.length - 1);
          expect(decoded ?? null).toEqual(parseBase64(text));
        },
      ),
      { numRuns: 2000 },
    );
  });
});
