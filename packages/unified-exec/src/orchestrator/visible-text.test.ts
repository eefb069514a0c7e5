import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { visibleJson, visibleText } from './visible-text.ts';

// What must never reach a person raw: controls, format characters, separators, surrogates.
const RAW_INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;

describe('visibleText', () => {
  test('escape sequences, CR, backspace and other C0/C1 controls and DEL become visible escapes', () => {
    expect(visibleText('echo safe\r\x1b[2Krm -rf ~')).toBe('echo safe\\r\\x1b[2Krm -rf ~');
    expect(visibleText('\x1b]8;;http://evil\x07link\x1b]8;;\x07')).toBe(
      '\\x1b]8;;http://evil\\x07link\\x1b]8;;\\x07',
    );
    expect(visibleText('\x1b]52;c;Y3VybCBldmls\x1b\\')).toBe('\\x1b]52;c;Y3VybCBldmls\\x1b\\');
    expect(visibleText('rm\b\b\bls')).toBe('rm\\x08\\x08\\x08ls');
    expect(visibleText('a\nb\tc\0d\x7fe\x85f\x9bg')).toBe('a\\nb\\tc\\x00d\\x7fe\\x85f\\x9bg');
  });

  test('bidi overrides, embeddings, isolates and marks become visible escapes', () => {
    const bidi = '\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c';
    expect(visibleText(`ls ${bidi}`)).toBe(
      'ls \\u202a\\u202b\\u202c\\u202d\\u202e\\u2066\\u2067\\u2068\\u2069\\u200e\\u200f\\u061c',
    );
    expect(visibleText('cat \u202etxt.hs')).toBe('cat \\u202etxt.hs');
  });

  test('line/paragraph separators, zero-width characters and tag characters become visible escapes', () => {
    expect(visibleText('a\u2028b\u2029c')).toBe('a\\u2028b\\u2029c');
    expect(visibleText('r\u200bm\u200c-\u200d\u2060\ufeff\u00ad')).toBe(
      'r\\u200bm\\u200c-\\u200d\\u2060\\ufeff\\xad',
    );
    expect(visibleText('x\u{e0041}\u{e007f}')).toBe('x\\u{e0041}\\u{e007f}');
    expect(visibleText('\u3164\u034f\ufe0f')).toBe('\\u3164\\u034f\\ufe0f');
    expect(visibleText('lone \ud800 surrogate')).toBe('lone \\ud800 surrogate');
  });

  test('printable text, including non-ASCII letters and emoji, is kept as is', () => {
    const plain = "git commit -m 'héllo wörld 日本語 😀' && echo \\x1b $HOME";
    expect(visibleText(plain)).toBe(plain);
  });

  test('keepLineBreaks keeps \\n, \\t and \\r\\n for multi-line output; a lone \\r and the rest are escaped', () => {
    expect(visibleText('a\r\nb\tc\nd\re\x1b[8mf\u202e', { keepLineBreaks: true })).toBe(
      'a\r\nb\tc\nd\\re\\x1b[8mf\\u202e',
    );
    expect(visibleText('\r\r\n\n\r', { keepLineBreaks: true })).toBe('\\r\r\n\n\\r');
  });

  test('the result never contains a raw invisible character', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        expect(visibleText(text)).not.toMatch(RAW_INVISIBLE);
        const kept = visibleText(text, { keepLineBreaks: true }).replace(/\r\n|\n|\t/g, '');
        expect(kept).not.toMatch(RAW_INVISIBLE);
      }),
    );
  });
});

describe('visibleJson', () => {
  test('escapes what JSON.stringify leaves raw, and still parses to the same value', () => {
    const value = { cmd: 'a\x7fb\x9bc\u202ed\u2028e\u{e0041}f\x1bg' };
    const json = visibleJson(JSON.stringify(value));
    expect(json).toBe('{"cmd":"a\\u007fb\\u009bc\\u202ed\\u2028e\\udb40\\udc41f\\u001bg"}');
    expect(JSON.parse(json)).toEqual(value);
  });

  test('any string round-trips and the line has no raw invisible character', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        const json = visibleJson(JSON.stringify({ text }));
        expect(json).not.toMatch(RAW_INVISIBLE);
        expect(JSON.parse(json)).toEqual({ text });
      }),
    );
  });
});
