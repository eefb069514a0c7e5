// The original's base64 error texts (Rust `base64` crate, canonical padding), probed on 0.169.0.
import { expect, test } from 'vitest';
import { base64Problem, decodeBase64Strict } from './base64-text.ts';

test.each([
  ['a', 'Invalid input length: 1'],
  ['aaaaa', 'Invalid input length: 5'],
  ['ab', 'Invalid padding'],
  ['aGVsbG8', 'Invalid padding'],
  ['aa=', 'Invalid padding'],
  ['!!', 'Invalid symbol 33, offset 0.'],
  ['a-b_', 'Invalid symbol 45, offset 1.'],
  ['aGk= ', 'Invalid symbol 32, offset 4.'],
  ['aGk=x', 'Invalid symbol 61, offset 3.'],
  ['aGk=aGk=', 'Invalid symbol 61, offset 3.'],
  ['aG=k', 'Invalid symbol 61, offset 2.'],
  ['a===', 'Invalid symbol 61, offset 1.'],
  ['====', 'Invalid symbol 61, offset 0.'],
  ['aaaa=', 'Invalid symbol 61, offset 4.'],
  ['aa===', 'Invalid symbol 61, offset 2.'],
  ['aaa==', 'Invalid symbol 61, offset 3.'],
  ['aGl=', 'Invalid last symbol 108, offset 2.'],
  ['aa==', 'Invalid last symbol 97, offset 1.'],
  ['aGVsbG9=', 'Invalid last symbol 57, offset 6.'],
])('%s: %s', (text, problem) => {
  expect(base64Problem(text)).toBe(problem);
  expect(() => decodeBase64Strict(text, 'fs/writeFile')).toThrow(
    `fs/writeFile requires valid base64 dataBase64: ${problem}`,
  );
});

test.each(['', 'aGk=', 'aGVsbG8=', 'aGVsbG8gd29ybGQK'])('%s is valid', (text) => {
  expect(base64Problem(text)).toBeUndefined();
  expect(Buffer.from(decodeBase64Strict(text, 'fs/writeFile')).toString('base64')).toBe(text);
});
