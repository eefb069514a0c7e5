import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { appendAllowPrefixRule, defaultRulesPath, loadRules } from './rules-file.ts';
import { RulesParser, RulesSyntaxError } from './rules-parser.ts';
import { splitShellWords } from './shell-words.ts';

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'execd-rules-'));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

function parse(source: string) {
  const parser = new RulesParser();
  parser.parse('test.rules', source);
  return parser.build();
}

describe('RulesParser', () => {
  test('prefix rules with alternatives, decisions and justifications', () => {
    const policy = parse(`
# comment
prefix_rule(pattern=["git", ["push", "fetch"]], decision="forbidden", justification="no network git")
prefix_rule(
    pattern = [["npm", "pnpm"], "test"],
    match = ["npm test", ["pnpm", "test", "--watch"]],
    not_match = ["npm install"],
)
prefix_rule(["touch"], "prompt")
`);
    expect(policy.matchesFor(['git', 'push', 'origin'])).toEqual([
      {
        type: 'prefixRule',
        matchedPrefix: ['git', 'push'],
        decision: 'forbidden',
        justification: 'no network git',
      },
    ]);
    expect(policy.matchesFor(['git', 'status'])).toEqual([]);
    expect(policy.matchesFor(['pnpm', 'test'])[0]).toMatchObject({ decision: 'allow' });
    expect(policy.matchesFor(['touch', 'a'])[0]).toMatchObject({ decision: 'prompt' });
  });

  test.each([
    ['prefix_rule(pattern=[])', 'pattern cannot be empty'],
    ['prefix_rule(pattern=["ls"], decision="maybe")', 'invalid decision'],
    ['prefix_rule(pattern=["ls"], justification="  ")', 'justification cannot be empty'],
    ['prefix_rule(pattern=["ls"], match=["cat x"])', 'does not match a match example'],
    ['prefix_rule(pattern=["ls"], not_match=["ls -l"])', 'matches a not_match example'],
    ['prefix_rule(pattern=["ls"], colour="red")', 'unexpected keyword argument'],
    ['import os', 'Variable `import` not found'],
    ['prefix_rule(pattern=["ls"]', 'expected `)`'],
    ['prefix_rule(pattern=["ls])', 'unterminated string literal'],
  ])('%s is refused with the file and line', (source, detail) => {
    const error = (() => {
      try {
        parse(`\n${source}`);
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(error).toBeInstanceOf(RulesSyntaxError);
    expect((error as RulesSyntaxError).line).toBe(2);
    expect((error as Error).message).toContain(detail);
    expect((error as Error).message).toMatch(/^test\.rules:2: .*\(problem is on or around line 2\)$/);
  });

  test('network_rule and host_executable are accepted (not enforced here)', () => {
    expect(
      parse(`network_rule(host="api.example.com", protocol="https", decision="allow")
host_executable(name="git", paths=["/usr/bin/git"])`).rules,
    ).toEqual([]);
  });
});

describe('splitShellWords', () => {
  test.each<[string, string[] | undefined]>([
    ['git  push origin', ['git', 'push', 'origin']],
    [`echo 'a b' "c \\"d\\"" e\\ f`, ['echo', 'a b', 'c "d"', 'e f']],
    ["echo 'unterminated", undefined],
    ['echo trailing\\', undefined],
    ['', []],
  ])('%j', (line, words) => {
    expect(splitShellWords(line)).toEqual(words);
  });
});

describe('rules files', () => {
  test('every *.rules file of rules/ is read in name order; other files are ignored', async () => {
    await mkdir(join(home, 'rules'));
    await writeFile(join(home, 'rules', 'b.rules'), 'prefix_rule(pattern=["ls"], decision="forbidden")\n');
    await writeFile(join(home, 'rules', 'a.rules'), 'prefix_rule(pattern=["ls"], decision="prompt")\n');
    await writeFile(join(home, 'rules', 'notes.txt'), 'not rules');
    const loaded = await loadRules([home]);
    expect(loaded.files).toEqual([join(home, 'rules', 'a.rules'), join(home, 'rules', 'b.rules')]);
    expect(loaded.policy.rules.map((rule) => rule.decision)).toEqual(['prompt', 'forbidden']);
    expect(loaded.warning).toBeUndefined();
  });

  test('a missing folder has no rules; a broken file empties the policy with a warning', async () => {
    expect((await loadRules([join(home, 'nowhere')])).policy.rules).toEqual([]);
    await mkdir(join(home, 'rules'));
    await writeFile(join(home, 'rules', 'a.rules'), 'prefix_rule(pattern=["ls"])\n');
    await writeFile(join(home, 'rules', 'b.rules'), 'prefix_rule(\n');
    const loaded = await loadRules([home]);
    expect(loaded.policy.rules).toEqual([]);
    expect(loaded.warning).toBeInstanceOf(RulesSyntaxError);
  });

  test('appending writes the original line once, creating rules/ and fixing a missing newline', async () => {
    const path = defaultRulesPath(home);
    expect(path).toBe(join(home, 'rules', 'default.rules'));
    await appendAllowPrefixRule(path, ['echo', 'Hello, world!']);
    await appendAllowPrefixRule(path, ['echo', 'Hello, world!']);
    expect(await readFile(path, 'utf8')).toBe(
      'prefix_rule(pattern=["echo", "Hello, world!"], decision="allow")\n',
    );
    await writeFile(path, 'prefix_rule(pattern=["ls"], decision="allow")');
    await Promise.all([appendAllowPrefixRule(path, ['a"b']), appendAllowPrefixRule(path, ['c'])]);
    expect(await readFile(path, 'utf8')).toBe(
      'prefix_rule(pattern=["ls"], decision="allow")\n' +
        'prefix_rule(pattern=["a\\"b"], decision="allow")\n' +
        'prefix_rule(pattern=["c"], decision="allow")\n',
    );
    // What was written reads back as rules.
    const loaded = await loadRules([home]);
    expect(loaded.policy.matchesFor(['a"b', 'x'])[0]).toMatchObject({ decision: 'allow' });
  });
});
