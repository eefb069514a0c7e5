import { describe, expect, test } from 'vitest';
import { utf8Error } from './discover-roots.ts';

describe('utf8Error (Rust `Utf8Error` texts, as the original words its warnings)', () => {
  test.each([
    [[0xff, 0xfe], 'invalid utf-8 sequence of 1 bytes from index 0'],
    [[0x61, 0x62, 0xe2, 0x82], 'incomplete utf-8 byte sequence from index 2'],
    [[0xe2, 0x28, 0xa1], 'invalid utf-8 sequence of 1 bytes from index 0'],
    [[0x61, 0xf0, 0x90, 0x28], 'invalid utf-8 sequence of 2 bytes from index 1'],
    [[0xed, 0xa0, 0x80], 'invalid utf-8 sequence of 1 bytes from index 0'],
  ])('%j -> %s', (bytes, message) => {
    expect(utf8Error(new Uint8Array(bytes))).toBe(message);
  });

  test('valid text has none', () => {
    expect(utf8Error(new TextEncoder().encode('héllo ✓ 𝄞'))).toBeUndefined();
  });
});
