import { describe, expect, test } from 'vitest';
import {
  approxTokenCount,
  byteBudget,
  formattedTruncateText,
  scaleTruncationPolicy,
  tokenBudget,
  truncateMiddleChars,
  truncateMiddleWithTokenBudget,
  truncateText,
} from './truncation.ts';
import { countLines } from './utf8.ts';

describe('token approximations and policies', () => {
  test('ceil(bytes / 4) over UTF-8 bytes', () => {
    expect(approxTokenCount('')).toBe(0);
    expect(approxTokenCount('abcd')).toBe(1);
    expect(approxTokenCount('abcde')).toBe(2);
    expect(approxTokenCount('é')).toBe(1);
    expect(approxTokenCount('😀😀')).toBe(2);
  });

  test('budgets convert between bytes and tokens; scaling rounds up', () => {
    expect(byteBudget({ kind: 'tokens', limit: 10 })).toBe(40);
    expect(byteBudget({ kind: 'bytes', limit: 10 })).toBe(10);
    expect(tokenBudget({ kind: 'bytes', limit: 10 })).toBe(3);
    expect(tokenBudget({ kind: 'tokens', limit: 10 })).toBe(10);
    expect(scaleTruncationPolicy({ kind: 'tokens', limit: 10_000 }, 1.2)).toEqual({
      kind: 'tokens',
      limit: 12_000,
    });
    expect(scaleTruncationPolicy({ kind: 'bytes', limit: 7 }, 1.2)).toEqual({ kind: 'bytes', limit: 9 });
  });

  test('lines are counted as Rust str::lines does', () => {
    expect(countLines('')).toBe(0);
    expect(countLines('a')).toBe(1);
    expect(countLines('a\n')).toBe(1);
    expect(countLines('a\n\nb')).toBe(3);
    expect(countLines('\n')).toBe(1);
    expect(countLines('a\r\nb\r\n')).toBe(2);
  });
});

describe('truncateMiddle', () => {
  test('keeps text that fits', () => {
    expect(truncateMiddleChars('hello', 5)).toBe('hello');
    expect(truncateMiddleWithTokenBudget('hello', 2)).toEqual({ text: 'hello' });
    expect(truncateMiddleWithTokenBudget('', 0)).toEqual({ text: '' });
  });

  test('chars marker counts removed characters; halves are char-aligned', () => {
    // 10 bytes budget: left 5, right 5. "ééééé" is 10 bytes, "ééééééé" 14.
    expect(truncateMiddleChars('ééééééé', 10)).toBe('éé…3 chars truncated…éé');
    expect(truncateMiddleChars('abcdefghij', 4)).toBe('ab…6 chars truncated…ij');
  });

  test('tokens marker counts ceil(removed bytes / 4)', () => {
    expect(truncateMiddleWithTokenBudget('abcdefghijklmnopqrstuvwxyz', 2)).toEqual({
      text: 'abcd…5 tokens truncated…wxyz',
      originalTokenCount: 7,
    });
  });

  test('a zero budget leaves only the marker', () => {
    expect(truncateText('abcdefg', { kind: 'tokens', limit: 0 })).toBe('…2 tokens truncated…');
    expect(truncateText('abcdéfg', { kind: 'bytes', limit: 0 })).toBe('…7 chars truncated…');
  });

  test('never splits a 4-byte character', () => {
    const text = `ab${'😀'.repeat(10)}`;
    const out = truncateMiddleWithTokenBudget(text, 3).text; // 12 bytes: left 6, right 6
    expect(out).toBe('ab😀…8 tokens truncated…😀');
  });
});

describe('formattedTruncateText', () => {
  test('unchanged when within the byte budget', () => {
    expect(formattedTruncateText('x'.repeat(40), { kind: 'tokens', limit: 10 })).toBe('x'.repeat(40));
  });

  test('warning header with original token count and line count', () => {
    const text = Array.from({ length: 30 }, (_, i) => `${i + 1}`).join('\n');
    const out = formattedTruncateText(text, { kind: 'tokens', limit: 5 });
    expect(
      out.startsWith(
        `Warning: truncated output (original token count: ${approxTokenCount(text)})\nTotal output lines: 30\n\n`,
      ),
    ).toBe(true);
    expect(out).toContain('tokens truncated');
  });
});
