import { expect, test } from 'vitest';
import { decodeUtf8Strict } from './strict-utf8.ts';

test.each([
  [[0x61, 0xff], 'invalid utf-8 sequence of 1 bytes from index 1'],
  [[0x00, 0x01, 0xff, 0x62], 'invalid utf-8 sequence of 1 bytes from index 2'],
  [[0xe2, 0x28, 0xa1], 'invalid utf-8 sequence of 1 bytes from index 0'],
  [[0xe2, 0x82, 0x28], 'invalid utf-8 sequence of 2 bytes from index 0'],
  [[0xf0, 0x90, 0x80, 0x28], 'invalid utf-8 sequence of 3 bytes from index 0'],
  [[0xed, 0xa0, 0x80], 'invalid utf-8 sequence of 1 bytes from index 0'],
  [[0xc0, 0x80], 'invalid utf-8 sequence of 1 bytes from index 0'],
  [[0x61, 0xe2, 0x82], 'incomplete utf-8 byte sequence from index 1'],
])('%j: Rust Utf8Error text', (bytes, message) => {
  expect(() => decodeUtf8Strict(Uint8Array.from(bytes))).toThrow(message);
});

test('valid UTF-8 (and a byte-order mark) decodes unchanged', () => {
  expect(decodeUtf8Strict(Uint8Array.from([0xef, 0xbb, 0xbf, 0x61, 0xc3, 0xa9]))).toBe('\ufeffaé');
});
