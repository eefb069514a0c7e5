import { describe, expect, test } from 'vitest';
import { hasRedrawSequences, renderTerminalText } from './terminal-render.ts';
import { approxTokenCount } from './truncation.ts';

const SIZE = { cols: 80, rows: 24 };

describe('hasRedrawSequences', () => {
  test.each([
    ['plain lines', 'a\r\nb\r\n', false],
    ['colours only', '\x1b[31mred\x1b[0m\r\n', false],
    ['a trailing carriage return', 'line\r', false],
    ['a carriage-return rewrite', '10%\r20%', true],
    ['a backspace', 'ab\bc', true],
    ['cursor up', 'a\r\n\x1b[1Ab', true],
    ['erase line', '\x1b[2Kx', true],
    ['the alternate screen', '\x1b[?1049hscreen', true],
  ])('%s: %s', (_name, text, expected) => {
    expect(hasRedrawSequences(text)).toBe(expected);
  });
});

describe('renderTerminalText', () => {
  test('200 rewrites of a progress line come back as its final state in < 1/10 of the tokens', async () => {
    let text = '';
    for (let step = 0; step <= 200; step++)
      text += `\rDownloading [${'#'.repeat(step / 10).padEnd(20)}] ${Math.floor(step / 2)}%`;
    text += '\r\ndone\r\n';
    const rendered = await renderTerminalText(text, SIZE);
    expect(rendered).toBe(`Downloading [${'#'.repeat(20)}] 100%\ndone\n`);
    expect(approxTokenCount(rendered) * 10).toBeLessThan(approxTokenCount(text));
  });

  test('keeps a prompt with its trailing space at the cursor', async () => {
    expect(await renderTerminalText('loading...\rready     \r\n>>> ', SIZE)).toBe('ready\n>>> ');
  });

  test('lines longer than the terminal are joined again', async () => {
    const long = 'x'.repeat(200);
    expect(await renderTerminalText(`${long}\r\nnext\r\b`, SIZE)).toBe(`${long}\nnext`);
  });

  test('cursor movement and erasing: what the screen shows', async () => {
    const text = 'one\r\ntwo\r\nthree\r\n\x1b[2A\x1b[2KTWO\r\n\x1b[1B';
    expect(await renderTerminalText(text, SIZE)).toBe('one\nTWO\nthree\n');
  });

  test('a program still on the alternate screen shows that screen after the earlier lines', async () => {
    const text = 'before\r\n\x1b[?1049h\x1b[H\x1b[2Jtop line\x1b[3;1Hthird line';
    expect(await renderTerminalText(text, SIZE)).toBe('before\ntop line\n\nthird line');
  });

  test('a program that left the alternate screen shows the normal screen again', async () => {
    const text = 'before\r\n\x1b[?1049h\x1b[Hfull screen\x1b[?1049lafter\r\n';
    expect(await renderTerminalText(text, SIZE)).toBe('before\nafter\n');
  });
});
