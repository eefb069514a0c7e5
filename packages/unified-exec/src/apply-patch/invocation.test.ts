import { describe, expect, test } from 'vitest';
import { IMPLICIT_INVOCATION_MESSAGE, parseApplyPatchInvocation } from './invocation.ts';

const PATCH = '*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch';
const bash = (script: string): string[] => ['/bin/bash', '-lc', script];

describe('parseApplyPatchInvocation', () => {
  test.each([
    ['apply_patch heredoc', `apply_patch <<'EOF'\n${PATCH}\nEOF\n`, '/w'],
    ['applypatch, unquoted delimiter', `applypatch <<EOF\n${PATCH}\nEOF`, '/w'],
    ['cd WORD &&', `cd sub && apply_patch <<"EOF"\n${PATCH}\nEOF`, '/w/sub'],
    ['cd "quoted"', `cd "my dir" && apply_patch <<'EOF'\n${PATCH}\nEOF`, '/w/my dir'],
    ["cd 'raw'", `cd '/abs dir' && apply_patch <<'EOF'\n${PATCH}\nEOF`, '/abs dir'],
  ])('%s: a patch in the right folder', async (_name, script, cwd) => {
    const invocation = await parseApplyPatchInvocation(bash(script), '/w');
    expect(invocation).toMatchObject({ kind: 'patch', cwd });
    expect(invocation.kind === 'patch' && invocation.parsed.hunks).toEqual([
      { type: 'add', path: 'a.txt', contents: 'a\n' },
    ]);
  });

  test.each([
    ['a prefix command', `echo hi; apply_patch <<'EOF'\n${PATCH}\nEOF`],
    ['a suffix command', `apply_patch <<'EOF'\n${PATCH}\nEOF\necho done`],
    ['|| instead of &&', `cd sub || apply_patch <<'EOF'\n${PATCH}\nEOF`],
    ['cd with two arguments', `cd a b && apply_patch <<'EOF'\n${PATCH}\nEOF`],
    ['two commands before', `mkdir x && cd x && apply_patch <<'EOF'\n${PATCH}\nEOF`],
    ['an argument instead of a heredoc', `apply_patch '${PATCH}'`],
    ['another program', `cat <<'EOF'\n${PATCH}\nEOF`],
    ['plain command', 'ls -la'],
  ])('%s: runs as a command', async (_name, script) => {
    expect(await parseApplyPatchInvocation(bash(script), '/w')).toEqual({ kind: 'none' });
  });

  test('other shells and argv shapes', async () => {
    const heredoc = `apply_patch <<'EOF'\n${PATCH}\nEOF`;
    expect((await parseApplyPatchInvocation(['/usr/bin/zsh', '-c', heredoc], '/w')).kind).toBe('patch');
    expect((await parseApplyPatchInvocation(['pwsh', '-NoProfile', '-Command', heredoc], '/w')).kind).toBe(
      'patch',
    );
    expect((await parseApplyPatchInvocation(['/bin/bash', '-x', heredoc], '/w')).kind).toBe('none');
    expect((await parseApplyPatchInvocation(['apply_patch', PATCH], '/w')).kind).toBe('patch');
  });

  test('a bare patch is refused; a broken one reports the parse error', async () => {
    expect(await parseApplyPatchInvocation(bash(PATCH), '/w')).toEqual({
      kind: 'invalid',
      message: IMPLICIT_INVOCATION_MESSAGE,
    });
    expect(await parseApplyPatchInvocation([PATCH], '/w')).toEqual({
      kind: 'invalid',
      message: IMPLICIT_INVOCATION_MESSAGE,
    });
    expect(
      await parseApplyPatchInvocation(
        bash(`apply_patch <<'EOF'\n*** Begin Patch\n*** Nope\n*** End Patch\nEOF`),
        '/w',
      ),
    ).toEqual({
      kind: 'invalid',
      message:
        "invalid hunk at line 2, '*** Nope' is not a valid hunk header. Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'",
    });
  });
});
