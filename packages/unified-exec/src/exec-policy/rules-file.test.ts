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

describe('network rules and host executables', () => {
  test('network rules compile into allowed and denied hosts, the last rule for a host winning', () => {
    const policy = parse(`
network_rule(host="google.com", protocol="http", decision="allow")
network_rule(host="API.GitHub.com:443", protocol="https", decision="allow")
network_rule(host="blocked.example.com.", protocol="https_connect", decision="deny")
network_rule(host="prompt-only.example.com", protocol="socks5_tcp", decision="prompt", justification="ask")
network_rule(host="[::1]:8080", protocol="socks5_udp", decision="forbidden")
network_rule(host="google.com", protocol="https", decision="deny")
`);
    expect(policy.networkRules).toHaveLength(6);
    expect(policy.networkRules[1]).toEqual({
      host: 'api.github.com',
      protocol: 'https',
      decision: 'allow',
      justification: undefined,
    });
    expect(policy.compiledNetworkDomains()).toEqual({
      allowed: ['api.github.com'],
      denied: ['blocked.example.com', '::1', 'google.com'],
    });
  });

  test.each([
    ['host="*.example.com", protocol="http", decision="allow"', 'wildcards are not allowed'],
    ['host="https://example.com", protocol="http", decision="allow"', 'without scheme or path'],
    [
      'host="example.com", protocol="ftp", decision="allow"',
      'must be one of http, https, socks5_tcp, socks5_udp (got ftp)',
    ],
    ['host="example.com", protocol="http", decision="maybe"', 'invalid decision: maybe'],
    [
      'host="example.com", protocol="http", decision="allow", justification=" "',
      'justification cannot be empty',
    ],
    ['host=" ", protocol="http", decision="allow"', 'network_rule host cannot be empty'],
  ])('a bad network_rule(%s) is refused', (args, detail) => {
    expect(() => parse(`network_rule(${args})`)).toThrow(detail);
  });

  test('an absolute program is matched by its name; host_executable limits the paths', () => {
    const open = parse('prefix_rule(pattern=["git", "push"], decision="forbidden")');
    expect(open.matchesFor(['/opt/bin/git', 'push'])).toEqual([
      {
        type: 'prefixRule',
        matchedPrefix: ['git', 'push'],
        decision: 'forbidden',
        justification: undefined,
        resolvedProgram: '/opt/bin/git',
      },
    ]);
    expect(open.matchesFor(['./git', 'push'])).toEqual([]);
    const limited = parse(`
prefix_rule(pattern=["git", "status"], match=["/usr/bin/git status"], not_match=["/opt/git/git status"])
host_executable(name="git", paths=["/usr/bin/git", "/usr/bin/git"])
`);
    expect(limited.hostExecutables.get('git')).toEqual(['/usr/bin/git']);
    expect(limited.matchesFor(['/usr/bin/git', 'status'])[0]).toMatchObject({ decision: 'allow' });
    expect(limited.matchesFor(['/opt/git/git', 'status'])).toEqual([]);
    // An exact rule for the path wins over the name's rules.
    const exact = parse(`
prefix_rule(pattern=["/usr/bin/git"], decision="allow")
prefix_rule(pattern=["git"], decision="forbidden")
`);
    expect(exact.matchesFor(['/usr/bin/git', 'status'])).toMatchObject([{ decision: 'allow' }]);
    // A later host_executable replaces an earlier one; adding a prefix keeps both kinds of rules.
    const parser = new RulesParser();
    parser.parse('a.rules', 'host_executable(name="git", paths=["/usr/bin/git"])');
    parser.parse(
      'b.rules',
      'host_executable(name="git", paths=["/opt/homebrew/bin/git"])\nnetwork_rule("x.test", "http", "allow")',
    );
    const widened = parser.build().withPrefixRule(['git'], 'allow');
    expect(widened.hostExecutables.get('git')).toEqual(['/opt/homebrew/bin/git']);
    expect(widened.compiledNetworkDomains().allowed).toEqual(['x.test']);
  });

  test.each([
    ['name="", paths=[]', 'host_executable name cannot be empty'],
    ['name="bin/git", paths=[]', 'must be a bare executable name (got bin/git)'],
    ['name="git", paths=["git"]', 'host_executable paths must be absolute (got git)'],
    ['name="git", paths=["/usr/bin/gitx"]', 'host_executable path `/usr/bin/gitx` must have basename `git`'],
    ['name="git", paths=[1]', 'host_executable paths must be strings'],
  ])('a bad host_executable(%s) is refused', (args, detail) => {
    expect(() => parse(`host_executable(${args})`)).toThrow(detail);
  });
});
