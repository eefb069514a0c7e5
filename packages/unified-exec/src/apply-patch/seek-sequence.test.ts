import { expect, test } from 'vitest';
import { seekSequence } from './seek-sequence.ts';

test('exact, then trailing-whitespace-insensitive, then trimmed, then punctuation-folded', () => {
  expect(seekSequence(['foo', 'bar', 'baz'], ['bar', 'baz'], 0, false)).toBe(1);
  expect(seekSequence(['foo   ', 'bar\t\t'], ['foo', 'bar'], 0, false)).toBe(0);
  expect(seekSequence(['    foo   ', '   bar\t'], ['foo', 'bar'], 0, false)).toBe(0);
  expect(seekSequence(['say \u201chi\u201d \u2014 ok\u00a0x'], ['say "hi" - ok x'], 0, false)).toBe(0);
  expect(seekSequence(['a'], ['b'], 0, false)).toBeUndefined();
});

test('an exact match later wins over a fuzzy match earlier', () => {
  expect(seekSequence(['x ', 'x'], ['x'], 0, false)).toBe(1);
});

test('start, end of file, empty and oversized patterns', () => {
  expect(seekSequence(['a', 'b', 'a'], ['a'], 1, false)).toBe(2);
  expect(seekSequence(['a', 'b', 'a'], ['a'], 0, true)).toBe(2);
  expect(seekSequence(['a', 'b'], ['a'], 0, true)).toBeUndefined();
  expect(seekSequence(['a'], [], 5, false)).toBe(5);
  expect(seekSequence(['one line'], ['too', 'many'], 0, false)).toBeUndefined();
});
