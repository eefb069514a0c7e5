import { beforeAll, describe, expect, test } from 'vitest';
import { type BashParser, loadBashParser, MAX_PARSED_SCRIPT_CHARS, UNPARSED_SCRIPTS } from './bash-parser.ts';
import { dangerousCommandMatch, isKnownSafeCommand } from './command-safety.ts';
import { commandsForExecPolicy } from './shell-commands.ts';

let parser: BashParser;
beforeAll(async () => {
  parser = await loadBashParser();
});

const bash = (script: string): string[] => ['/bin/bash', '-lc', script];

describe('plain command splitting (tree-sitter-bash)', () => {
  test.each<[string, string[][] | undefined]>([
    ['ls -1', [['ls', '-1']]],
    ["ls && pwd; echo 'hi there' | wc -l", [['ls'], ['pwd'], ['echo', 'hi there'], ['wc', '-l']]],
    ['git status || true', [['git', 'status'], ['true']]],
    ['echo "hello world"', [['echo', 'hello world']]],
    ['git commit -m "line1\nline2"', [['git', 'commit', '-m', 'line1\nline2']]],
    [`echo "/usr"'/'"local"/bin`, [['echo', '/usr/local/bin']]],
    [`rg -n "foo" -g"*.py"`, [['rg', '-n', 'foo', '-g*.py']]],
    ['echo 123 456', [['echo', '123', '456']]],
    // Not provably plain: each becomes undefined.
    ["ec''ho hi", undefined],
    ['(ls)', undefined],
    ['ls || (pwd && echo hi)', undefined],
    ['ls > out.txt', undefined],
    ['cat < /etc/passwd', undefined],
    ['echo hi & echo bye', undefined],
    ['echo $(pwd)', undefined],
    ['echo `pwd`', undefined],
    ['echo $HOME', undefined],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell expansion, not a template
    ['echo "hi ${USER}"', undefined],
    ['FOO=bar ls', undefined],
    ['ls &&', undefined],
    ['&& ls', undefined],
    ['ls ;; pwd', undefined],
    ['ls | | wc', undefined],
    ['if true; then ls; fi', undefined],
    ['for f in a b; do echo $f; done', undefined],
    ['cat <<EOF\nhi\nEOF', undefined],
    ['f() { ls; }; f', undefined],
  ])('%j', (script, expected) => {
    expect(parser.plainCommands(script)).toEqual(expected);
  });

  test('a script longer than the limit is never plain', () => {
    expect(parser.plainCommands(`echo ${'a'.repeat(MAX_PARSED_SCRIPT_CHARS)}`)).toBeUndefined();
  });
});

describe('commands judged by the exec policy', () => {
  test.each<[string[], string[][], boolean]>([
    [bash('ls && git push'), [['ls'], ['git', 'push']], false],
    [['zsh', '-lc', 'ls'], [['ls']], false],
    [['/bin/sh', '-c', 'pwd'], [['pwd']], false],
    // A here-doc script is judged by its one command (no amendment is proposed for it).
    [bash("cat <<'EOF'\nhello\nEOF"), [['cat']], true],
    [bash('python3 <<EOF\nprint(1)\nEOF'), [['python3']], true],
    // Anything else is judged as the whole argv.
    [bash('cat <<EOF > /etc/x\nhi\nEOF'), [bash('cat <<EOF > /etc/x\nhi\nEOF')], false],
    [bash('echo $(rm -rf /)'), [bash('echo $(rm -rf /)')], false],
    [['bash', '-lc', 'git', 'status'], [['bash', '-lc', 'git', 'status']], false],
    [['fish', '-c', 'ls'], [['fish', '-c', 'ls']], false],
    [['ls', '-la'], [['ls', '-la']], false],
  ])('%j', (command, commands, usedComplexParsing) => {
    expect(commandsForExecPolicy(parser, command)).toEqual({ commands, usedComplexParsing });
  });
});

test('without a parser every script is judged as its whole argv', () => {
  expect(commandsForExecPolicy(UNPARSED_SCRIPTS, bash('ls && pwd'))).toEqual({
    commands: [bash('ls && pwd')],
    usedComplexParsing: false,
  });
  expect(isKnownSafeCommand(UNPARSED_SCRIPTS, bash('ls'))).toBe(false);
  expect(isKnownSafeCommand(UNPARSED_SCRIPTS, ['ls'])).toBe(true);
});

describe('known-safe commands (untrusted auto-approval)', () => {
  test.each<[string[], boolean]>([
    [['ls'], true],
    [['/usr/bin/cat', 'x'], true],
    [['base64'], true],
    [['base64', '-o', 'out'], false],
    [['base64', '--output=out'], false],
    [['base64', '-ob64.txt'], false],
    [['sed', '-n', '1,5p', 'file.txt'], true],
    [['sed', '-n', 'xp', 'file.txt'], false],
    [['sed', '-i', 's/a/b/', 'file.txt'], false],
    [['find', '.', '-name', 'x'], true],
    [['find', '.', '-delete'], false],
    [['find', '.', '-exec', 'rm', '{}', ';'], false],
    [['rg', '-n', 'x'], true],
    [['rg', '--pre=pwned', 'x'], false],
    [['rg', '-z', 'x'], false],
    [['numfmt', '1000'], true],
    [['git', 'status'], false],
    [['cargo', 'check'], false],
    [bash('ls && pwd'), true],
    [bash("echo 'hi' ; ls | wc -l"), true],
    [bash('grep -R "Cargo.toml" -n || true'), true],
    [bash("sed -n '1,5p' file.txt"), true],
    [['zsh', '-lc', 'ls'], true],
    [bash('git status'), false],
    [bash('ls && rm -rf /'), false],
    [bash('(ls)'), false],
    [bash('ls > out.txt'), false],
    [bash("ec''ho hi"), false],
    [bash('echo $(whoami)'), false],
    [bash("'git status'"), false],
    [['bash', '-lc', 'git', 'status'], false],
  ])('%j -> %s', (command, safe) => {
    expect(isKnownSafeCommand(parser, command)).toBe(safe);
  });
});

describe('dangerous commands', () => {
  test.each<[string[], 'forcedRm' | undefined]>([
    [['rm', '-rf', '/'], 'forcedRm'],
    [['/bin/rm', '-fr', '/tmp/x'], 'forcedRm'],
    [['rm', '-r', '-f', '/tmp/x'], 'forcedRm'],
    [['rm', '--force', 'x'], 'forcedRm'],
    [['rm', 'x', '-f'], 'forcedRm'],
    [['sudo', 'rm', '-rf', 'x'], 'forcedRm'],
    [bash('printf x | rm -rf /tmp/example'), 'forcedRm'],
    [bash('if test -d /tmp/x; then rm --force /tmp/x; fi'), 'forcedRm'],
    [bash('rm -rf "$TARGET" >/dev/null'), 'forcedRm'],
    [bash('echo "$(rm -rf /tmp/example)"'), 'forcedRm'],
    [bash('for t in a b; do rm -r -f "$t"; done'), 'forcedRm'],
    [['rm', '-r', '/tmp/x'], undefined],
    [['rm', '--', '-f'], undefined],
    [bash("echo 'rm -rf /tmp/example'"), undefined],
    [bash('cmd=rm; $cmd -rf /tmp/example'), undefined],
  ])('%j', (command, expected) => {
    expect(dangerousCommandMatch(parser, command)).toBe(expected);
  });
});
