import { expect, test } from 'vitest';
import { stableStringify } from './cache-key.ts';

test('stableStringify ignores key order and undefined members', () => {
  expect(stableStringify({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: undefined } })).toBe(
    stableStringify({ a: { d: [1, { x: 1, y: 2 }] }, b: 1 }),
  );
  expect(stableStringify({ a: 1 })).not.toBe(stableStringify({ a: 2 }));
  expect(stableStringify(undefined)).toBe('null');
});
