import { describe, expect, test } from 'vitest';
import { MAX_SNAPSHOT_BYTES } from './limits.ts';
import { parseCaptureOutput } from './parse-capture.ts';

const frame = (...parts: (string | Uint8Array)[]): Uint8Array =>
  Buffer.concat(
    parts.map((part) => (typeof part === 'string' ? Buffer.from(part, 'utf8') : Buffer.from(part))),
  );

describe('parseCaptureOutput', () => {
  test('strips the preamble, splits sections and NUL-separated env, ignores what follows the end', () => {
    const parsed = parseCaptureOutput(
      frame(
        'profile noise\n',
        new Uint8Array([0xff]),
        '\0# Snapshot file\0',
        'set -o braceexpand\n\0',
        "alias ll='ls -l'\n\0",
        'f () \n{ \n    :\n}\n\0',
        'A=1\0MULTI=a\nb\0EMPTY=\0EQ=x=y\0',
        '# End of snapshot\0',
        'trap output after the end',
      ),
    );
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.sections.options).toBe('set -o braceexpand\n');
    expect(parsed.sections.aliases).toBe("alias ll='ls -l'\n");
    expect(parsed.sections.functions).toBe('f () \n{ \n    :\n}\n');
    expect([...parsed.sections.env]).toEqual([
      ['A', '1'],
      ['MULTI', 'a\nb'],
      ['EMPTY', ''],
      ['EQ', 'x=y'],
    ]);
  });

  test('drops env entries that are not UTF-8, lack `=`, or have invalid names', () => {
    const parsed = parseCaptureOutput(
      frame(
        '\0# Snapshot file\0\0\0\0',
        'NON_UTF8=',
        new Uint8Array([0xff]),
        '\0NOEQUALS\0BAD-NAME=x\0NEXTEST_BIN_EXE_codex-write-config-schema=/bin\0BASH_FUNC_f%%=() { :; }\0',
        '1BAD=x\0=x\0OK_1=y\0# End of snapshot\0',
      ),
    );
    expect(parsed.ok && [...parsed.sections.env]).toEqual([['OK_1', 'y']]);
  });

  test.each([
    ['no marker', frame('set -o x\n\0\0\0A=1\0# End of snapshot\0')],
    ['a truncated section', frame('\0# Snapshot file\0set -o x\n')],
    ['no end marker', frame('\0# Snapshot file\0\0\0\0A=1\0B=2\0')],
    [
      'state that is not UTF-8',
      frame('\0# Snapshot file\0', new Uint8Array([0xc3, 0x28]), '\0\0\0# End of snapshot\0'),
    ],
  ])('fails on %s', (_name, output) => {
    expect(parseCaptureOutput(output).ok).toBe(false);
  });

  test('counts state and env before filtering against the size limit', () => {
    const half = 'x'.repeat(MAX_SNAPSHOT_BYTES / 2);
    const output = frame(`\0# Snapshot file\0# ${half}\n\0\0\0FILTERED=${half}\0# End of snapshot\0`);
    expect(parseCaptureOutput(output)).toEqual({
      ok: false,
      detail: `shell snapshot exceeds ${MAX_SNAPSHOT_BYTES} bytes`,
    });
  });
});
