import { describe, expect, test } from 'vitest';
import { PatchParseError, parsePatch, rustLines } from './parser.ts';

const wrap = (...lines: string[]): string => ['*** Begin Patch', ...lines, '*** End Patch'].join('\n');

function parseError(text: string): { kind: string; message: string } {
  try {
    parsePatch(text);
  } catch (error) {
    if (error instanceof PatchParseError) return { kind: error.kind, message: error.message };
    throw error;
  }
  throw new Error('parsed');
}

describe('parsePatch', () => {
  test('add, delete, update with move and context', () => {
    const parsed = parsePatch(
      wrap(
        '*** Add File: path/add.py',
        '+abc',
        '+def',
        '*** Delete File: path/delete.py',
        '*** Update File: path/update.py',
        '*** Move to: path/update2.py',
        '@@ def f():',
        '-    pass',
        '+    return 123',
      ),
    );
    expect(parsed.hunks).toEqual([
      { type: 'add', path: 'path/add.py', contents: 'abc\ndef\n' },
      { type: 'delete', path: 'path/delete.py' },
      {
        type: 'update',
        path: 'path/update.py',
        movePath: 'path/update2.py',
        chunks: [
          {
            changeContext: 'def f():',
            oldLines: ['    pass'],
            newLines: ['    return 123'],
            isEndOfFile: false,
            kinds: '-+',
          },
        ],
      },
    ]);
  });

  test('the first chunk may start without @@; an empty line inside a chunk is empty context', () => {
    const parsed = parsePatch(
      wrap('*** Update File: f', ' import foo', '+bar', '', '@@', '-x', '+y', '*** End of File'),
    );
    expect(parsed.hunks[0]).toMatchObject({
      chunks: [
        {
          changeContext: undefined,
          oldLines: ['import foo', ''],
          newLines: ['import foo', 'bar', ''],
          isEndOfFile: false,
        },
        { changeContext: undefined, oldLines: ['x'], newLines: ['y'], isEndOfFile: true },
      ],
    });
  });

  test('lenient: padding around markers, a heredoc wrapper, CRLF line ends', () => {
    expect(parsePatch(' *** Begin Patch \n*** Add File: a\n+x\n  *** End Patch  \n').hunks).toHaveLength(1);
    const heredoc = parsePatch(`<<'EOF'\n${wrap('*** Add File: a', '+x')}\nEOF\n`);
    expect(heredoc.patch).toBe(wrap('*** Add File: a', '+x'));
    expect(parsePatch('*** Begin Patch\r\n*** Add File: a\r\n+x\r\n*** End Patch\r\n').hunks).toEqual([
      { type: 'add', path: 'a', contents: 'x\n' },
    ]);
    expect(parsePatch(wrap()).hunks).toEqual([]);
  });

  test.each([
    ['', "invalid patch: The last line of the patch must be '*** End Patch'"],
    ['bad', "invalid patch: The first line of the patch must be '*** Begin Patch'"],
    ['*** Begin Patch\nbad', "invalid patch: The last line of the patch must be '*** End Patch'"],
    [
      wrap('*** Frobnicate File: x'),
      "invalid hunk at line 2, '*** Frobnicate File: x' is not a valid hunk header. Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'",
    ],
    [wrap('*** Update File: t.py'), "invalid hunk at line 2, Update file hunk for path 't.py' is empty"],
    [
      wrap('*** Update File: t.py', 'x'),
      "invalid hunk at line 3, Unexpected line found in update hunk: 'x'. Every line should start with ' ' (context line), '+' (added line), or '-' (removed line)",
    ],
    [
      wrap('*** Update File: t', '@@', '-a', 'bogus'),
      "invalid hunk at line 5, Expected update hunk to start with a @@ context marker, got: 'bogus'",
    ],
    [wrap('*** Update File: t', '@@'), 'invalid hunk at line 4, Update hunk does not contain any lines'],
    [
      wrap('*** Update File: t', '@@', 'x'),
      "invalid hunk at line 4, Unexpected line found in update hunk: 'x'. Every line should start with ' ' (context line), '+' (added line), or '-' (removed line)",
    ],
    [
      wrap('*** Update File: t', '@@', '*** End of File'),
      'invalid hunk at line 4, Update hunk does not contain any lines',
    ],
    [`<<'EOF'\n*** Add File: a\nEOF`, "invalid patch: The first line of the patch must be '*** Begin Patch'"],
  ])('malformed patch %#: the original text', (text, message) => {
    expect(parseError(text).message).toBe(message);
  });

  test('a huge patch parses in one pass', () => {
    const lines = Array.from({ length: 200_000 }, (_, i) => `+line ${i}`);
    const parsed = parsePatch(`*** Begin Patch\n*** Add File: big.txt\n${lines.join('\n')}\n*** End Patch`);
    const hunk = parsed.hunks[0];
    expect(hunk?.type === 'add' && hunk.contents).toBe(`${lines.map((line) => line.slice(1)).join('\n')}\n`);
  });
});

test('rustLines: \\r is dropped only before \\n; no empty line after the final newline', () => {
  expect(rustLines('a\r\nb\n\nc\r')).toEqual(['a', 'b', '', 'c\r']);
  expect(rustLines('a\n')).toEqual(['a']);
  expect(rustLines('')).toEqual([]);
});
