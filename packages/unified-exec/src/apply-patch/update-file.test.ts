import { expect, test } from 'vitest';
import { parsePatch, type UpdateFileChunk } from './parser.ts';
import { deriveNewContents } from './update-file.ts';

function chunks(...lines: string[]): readonly UpdateFileChunk[] {
  const [hunk] = parsePatch(
    ['*** Begin Patch', '*** Update File: f', ...lines, '*** End Patch'].join('\n'),
  ).hunks;
  if (hunk?.type !== 'update') throw new Error('not an update');
  return hunk.chunks;
}

test('several chunks apply in order; context lines anchor them', () => {
  const original = 'alpha\nbeta\ngamma\ndelta\nepsilon\n';
  const patch = chunks('@@', ' alpha', '-beta', '+BETA', '@@', ' delta', '-epsilon', '+EPSILON');
  expect(deriveNewContents(original, 'f', patch, true)).toBe('alpha\nBETA\ngamma\ndelta\nEPSILON\n');
});

test('@@ context narrows to the second of two identical blocks', () => {
  const original = 'fn a() {\n  x\n}\nfn b() {\n  x\n}\n';
  expect(deriveNewContents(original, 'f', chunks('@@ fn b() {', '-  x', '+  y'), true)).toBe(
    'fn a() {\n  x\n}\nfn b() {\n  y\n}\n',
  );
});

test('a pure addition goes at the end; the result always ends with a newline', () => {
  expect(deriveNewContents('a\nb', 'f', chunks('@@', '+c'), true)).toBe('a\nb\nc\n');
  expect(deriveNewContents('head\ntail', 'f', chunks('@@', '-tail', '+TAIL', '*** End of File'), true)).toBe(
    'head\nTAIL\n',
  );
});

test("context lines keep the file's text and ending; added lines take the first ending", () => {
  const patch = chunks('@@', ' x', '-y', '+Y', ' z');
  expect(deriveNewContents('x  \n  y\nz\n', 'f', patch, true)).toBe('x  \nY\nz\n');
  expect(deriveNewContents('q\na\r\n', 'f', chunks('@@', ' q', '-a', '+a'), true)).toBe('q\na\n');
  expect(deriveNewContents('a\r\nb\n', 'f', chunks('@@', '-a', '-b', '+b', '+a'), true)).toBe('b\r\na\r\n');
  expect(deriveNewContents('k\r\nm\nn \n', 'f', chunks('@@', ' k', '+ins', ' m', '-n', '+n'), true)).toBe(
    'k\r\nins\r\nm\nn\r\n',
  );
});

test('line endings: kept per line (preserve) or normalised to LF lines with CR left in the text', () => {
  const patch = chunks('@@', ' a', '-b', '+B', '+B2');
  expect(deriveNewContents('a\r\nb\r\nc\r\n', 'f', patch, true)).toBe('a\r\nB\r\nB2\r\nc\r\n');
  // Without preservation the matched lines (found by the trailing-whitespace pass) are replaced as written.
  expect(deriveNewContents('a\r\nb\r\nc\r\n', 'f', patch, false)).toBe('a\nB\nB2\nc\r\n');
  expect(deriveNewContents('a\nb\r\nc', 'f', chunks('@@', '-a', '+A', ' b', ' c', '+d'), true)).toBe(
    'A\nb\r\nc\nd\n',
  );
});

test('missing lines and context: the original texts', () => {
  expect(() => deriveNewContents('a\n', '/w/f', chunks('@@', '-x', '+y'), true)).toThrow(
    'Failed to find expected lines in /w/f:\nx',
  );
  expect(() => deriveNewContents('a\n', '/w/f', chunks('@@ nope', '-a', '+y'), true)).toThrow(
    "Failed to find context 'nope' in /w/f",
  );
});

test('a large file: one change near the end', () => {
  const lines = Array.from({ length: 100_000 }, (_, i) => `line ${i}`);
  const result = deriveNewContents(
    `${lines.join('\n')}\n`,
    'f',
    chunks('@@', ' line 99998', '-line 99999', '+last'),
    true,
  );
  expect(result.endsWith('line 99998\nlast\n')).toBe(true);
  expect(result.split('\n')).toHaveLength(100_001);
});
