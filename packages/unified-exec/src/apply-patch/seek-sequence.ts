import { rustTrim, rustTrimEnd } from './parser.ts';

// Typographic punctuation and odd spaces folded to ASCII by the last, most lenient pass.
const PUNCTUATION: ReadonlyMap<string, string> = new Map([
  ...['\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212'].map((c) => [c, '-'] as const),
  ...['\u2018', '\u2019', '\u201a', '\u201b'].map((c) => [c, "'"] as const),
  ...['\u201c', '\u201d', '\u201e', '\u201f'].map((c) => [c, '"'] as const),
  ...[
    '\u00a0',
    '\u2002',
    '\u2003',
    '\u2004',
    '\u2005',
    '\u2006',
    '\u2007',
    '\u2008',
    '\u2009',
    '\u200a',
    '\u202f',
    '\u205f',
    '\u3000',
  ].map((c) => [c, ' '] as const),
]);

function normalisePunctuation(line: string): string {
  let out = '';
  for (const char of rustTrim(line)) out += PUNCTUATION.get(char) ?? char;
  return out;
}

// The file's lines normalised by each pass, computed on first use (keyed by the lines array).
const NORMALISED = new WeakMap<readonly string[], string[][]>();

const PASSES: ReadonlyArray<(line: string) => string> = [
  (line) => line,
  rustTrimEnd,
  rustTrim,
  normalisePunctuation,
];

/**
 * Where `pattern` occurs in `lines` at or after `start` (the original's `seek_sequence`), or
 * undefined. Each pass tries every position before the next, more lenient pass: exact, then
 * ignoring trailing whitespace, then ignoring surrounding whitespace, then with typographic
 * dashes, quotes and spaces folded to ASCII. With `eof` the search starts where the pattern
 * would end the file. An empty pattern matches at `start`.
 */
export function seekSequence(
  lines: readonly string[],
  pattern: readonly string[],
  start: number,
  eof: boolean,
): number | undefined {
  if (pattern.length === 0) return start;
  if (pattern.length > lines.length) return undefined;
  const searchStart = eof ? lines.length - pattern.length : start;
  const lastStart = lines.length - pattern.length;
  let normalised = NORMALISED.get(lines);
  if (normalised === undefined) {
    normalised = [];
    NORMALISED.set(lines, normalised);
  }
  for (const [pass, normalise] of PASSES.entries()) {
    const wanted = pattern.map(normalise);
    // Each line is normalised once per pass and file, however many chunks are searched.
    normalised[pass] ??= lines.map(normalise);
    const haystack = normalised[pass];
    for (let at = searchStart; at <= lastStart; at++) {
      let matches = true;
      for (let offset = 0; offset < wanted.length; offset++) {
        if (haystack[at + offset] !== wanted[offset]) {
          matches = false;
          break;
        }
      }
      if (matches) return at;
    }
  }
  return undefined;
}
