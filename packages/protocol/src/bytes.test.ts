import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  base64DecodedLength,
  decodeBase64,
  encodeBase64,
  fromUtf8,
  isBase64,
  parseBase64,
  parseBase64BytesInto,
  utf8,
} from './bytes.ts';
import { decodeBase64Portable, encodeBase64Portable, isBase64Portable } from './internal/base64-portable.ts';

const implementations = [
  { name: 'host', encode: encodeBase64, decode: decodeBase64 },
  { name: 'portable', encode: encodeBase64Portable, decode: decodeBase64Portable },
];

describe.each(implementations)('base64 ($name)', ({ encode, decode }) => {
  test('matches the standard padded alphabet on known vectors', () => {
    const vectors: [string, string][] = [
      ['', ''],
      ['f', 'Zg=='],
      ['fo', 'Zm8='],
      ['foo', 'Zm9v'],
      ['foob', 'Zm9vYg=='],
      ['hi\n', 'aGkK'],
      ['first\n', 'Zmlyc3QK'],
    ];
    for (const [plain, encoded] of vectors) {
      expect(encode(utf8(plain))).toBe(encoded);
      expect(fromUtf8(decode(encoded))).toBe(plain);
    }
    expect(encode(new Uint8Array([0xfb, 0xff, 0xbf]))).toBe('+/+/');
  });

  test('round-trips any bytes and agrees with Node Buffer', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        const text = encode(bytes);
        expect(text).toBe(Buffer.from(bytes).toString('base64'));
        expect(isBase64(text)).toBe(true);
        expect(decode(text)).toEqual(bytes);
      }),
      { numRuns: 300 },
    );
  });

  test('encodes a view into a larger buffer, not the whole buffer', () => {
    const backing = utf8('xxhixx');
    expect(encode(backing.subarray(2, 4))).toBe('aGk=');
  });

  test('encodes large inputs', () => {
    const bytes = new Uint8Array(100_000).map((_, i) => i * 7);
    expect(encode(bytes)).toBe(Buffer.from(bytes).toString('base64'));
  });
});

describe.each([
  ['host', isBase64],
  ['portable', isBase64Portable],
])('isBase64 (%s) accepts exactly what the original accepts', (_name, isBase64) => {
  test.each(['', 'QQ==', 'QUI=', 'QUJD', 'aGkK', '+/+/', 'AAAA////'])('accepts %j', (text) => {
    expect(isBase64(text)).toBe(true);
  });

  test.each([
    ['QR==', 'non-zero bits after the last byte (Invalid last symbol)'],
    ['QUJ=', 'non-zero bits after the last byte, one pad char'],
    ['QQ', 'missing padding (Invalid padding)'],
    ['Q===', 'three pad chars'],
    ['====', 'only padding'],
    [' QQ==', 'leading whitespace (Invalid symbol 32)'],
    ['QQ==\n', 'trailing newline'],
    ['QQ-_', 'URL-safe alphabet'],
    ['QQ=A', 'padding in the middle'],
    ['QUJD\u00e9AAA', 'non-ASCII'],
    ['QUJD\u0141AAA', 'a character whose low byte is a letter (U+0141 as `A`)'],
    ['QUJD\uD83D\uDE00AA', 'a surrogate pair'],
    ['QU\0DAAAA', 'a NUL inside'],
  ])('refuses %j: %s', (text) => {
    expect(isBase64(text)).toBe(false);
  });
});

describe('parseBase64', () => {
  test('the host check agrees with the strict portable one on any text of base64-ish characters', () => {
    const alphabet = [...'AQgw+/=-_ \n\u00e9\u0141\u0000'];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...alphabet), { maxLength: 24 }), (chars) => {
        const text = chars.join('');
        expect(parseBase64(text) !== null).toBe(isBase64Portable(text));
      }),
      { numRuns: 3000 },
    );
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 40 }),
        fc.nat(60),
        fc.constantFrom(...alphabet),
        (bytes, at, c) => {
          const valid = encodeBase64(bytes);
          const text = valid.slice(0, at) + c + valid.slice(at + 1);
          expect(parseBase64(text) !== null).toBe(isBase64Portable(text));
        },
      ),
      { numRuns: 3000 },
    );
  });

  test('decodes megabytes, and refuses one bad character anywhere in them', () => {
    const bytes = new Uint8Array(3 * 1024 * 1024).map((_, i) => (i * 31) & 0xff);
    const text = encodeBase64(bytes);
    expect(parseBase64(text)).toEqual(bytes);
    for (const at of [0, 1_000_003, text.length - 5])
      for (const c of [' ', '-', '=', '\u0141'])
        expect(parseBase64(text.slice(0, at) + c + text.slice(at + 1))).toBeNull();
  });

  test('decodes canonical base64 and returns null otherwise', () => {
    expect(parseBase64('aGkK')).toEqual(utf8('hi\n'));
    expect(parseBase64('')).toEqual(new Uint8Array());
    for (const bad of ['QR==', 'QQ', ' QQ==', 'QQ-_', '====']) expect(parseBase64(bad)).toBeNull();
  });

  test('agrees with the portable check on random strings over the alphabet', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom(...'AQZaz09+/=-_ '.split('')), maxLength: 12 }),
        (text) => {
          expect(parseBase64(text) !== null).toBe(isBase64Portable(text));
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('parseBase64BytesInto', () => {
  /** `parseBase64` of the text's UTF-8 bytes, decoded into a target at offset 3 (-1 for null). */
  function both(text: string, target: Uint8Array): [number, number[] | null] {
    const source = utf8(`xx${text}yy`);
    const start = 2;
    const end = source.length - 2;
    const written = parseBase64BytesInto(source, start, end, target, 3);
    const expected = parseBase64(text);
    if (expected !== null) expect(base64DecodedLength(source, start, end)).toBe(expected.byteLength);
    return [written, written < 0 ? null : [...target.subarray(3, 3 + written)]];
  }

  test('agrees with parseBase64 on any text, into a Buffer (native) and a plain Uint8Array', () => {
    const alphabet = [...'AQgw+/=-_ \n\u00e9\u0141\u0000"\\'];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...alphabet), { maxLength: 24 }), (chars) => {
        const text = chars.join('');
        const expected = parseBase64(text);
        for (const target of [Buffer.alloc(40), new Uint8Array(40)]) {
          const [written, bytes] = both(text, target);
          expect(written).toBe(expected === null ? -1 : expected.byteLength);
          expect(bytes).toEqual(expected === null ? null : [...expected]);
        }
      }),
      { numRuns: 3000 },
    );
  });

  test('decodes valid base64 of any bytes exactly', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        for (const target of [Buffer.alloc(80), new Uint8Array(80)])
          expect(both(encodeBase64(bytes), target)).toEqual([bytes.length, [...bytes]]);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('decodeBase64', () => {
  test('returns a plain Uint8Array that owns its buffer (not a pooled Node Buffer slice)', () => {
    const bytes = decodeBase64('aGkK');
    expect(Object.getPrototypeOf(bytes)).toBe(Uint8Array.prototype);
    expect(bytes.byteOffset).toBe(0);
    expect(bytes.buffer.byteLength).toBe(3);
    const large = decodeBase64(Buffer.alloc(20_000, 1).toString('base64'));
    expect(Object.getPrototypeOf(large)).toBe(Uint8Array.prototype);
    expect(large.buffer.byteLength).toBe(20_000);
  });
});

describe('utf8', () => {
  test('round-trips text and replaces invalid sequences', () => {
    expect(fromUtf8(utf8('héllo ✓'))).toBe('héllo ✓');
    expect(fromUtf8(new Uint8Array([0x61, 0xff, 0x62]))).toBe('a\ufffdb');
  });
});
