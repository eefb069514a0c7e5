import { describe, expect, test } from 'vitest';
import { parseCliArgs, UsageError } from './cli-args.ts';
import { refusedWorkspace } from './workspace-guard.ts';

const parse = (...argv: string[]) => parseCliArgs(argv, {});

describe('parseCliArgs', () => {
  test('run: the command may follow unquoted, after options or after --', () => {
    expect(parse('run', 'ls', '-la').command).toBe('ls -la');
    expect(parse('run', '--cwd', '/src', 'ls', '-la')).toMatchObject({ command: 'ls -la', cwd: '/src' });
    expect(parse('run', '--', 'ls', '-la').command).toBe('ls -la');
    expect(parse('--sandbox', 'read-only', 'run', '--', '--weird-name').command).toBe('--weird-name');
    // Options after the command are the command's.
    expect(parse('run', 'grep', '--cwd', 'x').command).toBe('grep --cwd x');
    // One word is a script; several are an argv, each quoted as typed.
    expect(parse('run', 'ls | wc -l').command).toBe('ls | wc -l');
    expect(parse('run', 'grep', 'a b', "it's").command).toBe(`grep 'a b' 'it'"'"'s'`);
  });

  test('run without a command, or with a bad option, is a usage error about run', () => {
    for (const argv of [['run'], ['run', '--'], ['run', '--bogus', 'ls']]) {
      const error = (() => {
        try {
          parse(...argv);
        } catch (caught) {
          return caught;
        }
      })();
      expect(error).toBeInstanceOf(UsageError);
      expect((error as UsageError).topic).toBe('run');
    }
  });

  test('help and version', () => {
    expect(parse('--help')).toMatchObject({ mode: 'help', helpTopic: undefined });
    expect(parse('help')).toMatchObject({ mode: 'help', helpTopic: undefined });
    expect(parse('help', 'run')).toMatchObject({ mode: 'help', helpTopic: 'run' });
    expect(parse('run', '--help')).toMatchObject({ mode: 'help', helpTopic: 'run' });
    expect(parse('mcp', '-h')).toMatchObject({ mode: 'help', helpTopic: 'mcp' });
    expect(parse('--version').mode).toBe('version');
    expect(parse('-V').mode).toBe('version');
    expect(() => parse('help', 'frobnicate')).toThrow('no help for "frobnicate"');
    // `--help` after the command is the command's own.
    expect(parse('run', 'ls', '--help')).toMatchObject({ mode: 'run', command: 'ls --help' });
  });

  test('--timeout, shell snapshot (on by default)', () => {
    expect(parse('run', '--timeout', '1.5', 'true').timeoutSeconds).toBe(1.5);
    expect(() => parse('run', '--timeout', '0', 'true')).toThrow('--timeout must be more than 0');
    expect(() => parse('run', '--timeout', 'soon', 'true')).toThrow(
      '--timeout must be a non-negative number',
    );
    expect(parse('mcp').shellSnapshot).toBe(true);
    expect(parse('mcp', '--no-shell-snapshot').shellSnapshot).toBe(false);
    expect(parse('mcp').prepareSandboxes).toBe(false);
    expect(parse('mcp', '--prepare-sandboxes').prepareSandboxes).toBe(true);
    expect(() => parse('mcp', '--prepare-sandboxes', '--remote', 'ws://127.0.0.1:1')).toThrow(
      /--prepare-sandboxes/,
    );
    // A fork server for the long-lived local sessions only.
    expect(parse('mcp').forkServer).toBe(true);
    expect(parse().forkServer).toBe(true);
    expect(parse('mcp', '--no-fork-server').forkServer).toBe(false);
    expect(parse('run', 'true').forkServer).toBe(false);
    expect(parse('mcp', '--remote', 'ws://127.0.0.1:1').forkServer).toBe(false);
  });
});

describe('refusedWorkspace', () => {
  const home = '/home/someone';
  test('refuses / and the home folder as a writable workspace without --cwd', () => {
    expect(
      refusedWorkspace({ cwd: undefined, remote: undefined, sandbox: 'workspace-write' }, '/', home),
    ).toMatch(/^refusing to make \/ \(the root of the file system\) writable.*--cwd DIR/);
    expect(
      refusedWorkspace({ cwd: undefined, remote: undefined, sandbox: 'workspace-write' }, `${home}/`, home),
    ).toContain('(your home folder)');
  });

  test('accepts a project folder, an explicit --cwd, read-only, full access and --remote', () => {
    const base = { cwd: undefined, remote: undefined, sandbox: 'workspace-write' } as const;
    expect(refusedWorkspace(base, `${home}/project`, home)).toBeUndefined();
    expect(refusedWorkspace({ ...base, cwd: '/' }, '/', home)).toBeUndefined();
    expect(refusedWorkspace({ ...base, sandbox: 'read-only' }, '/', home)).toBeUndefined();
    expect(refusedWorkspace({ ...base, sandbox: 'danger-full-access' }, '/', home)).toBeUndefined();
    expect(refusedWorkspace({ ...base, remote: 'ws://127.0.0.1:1' }, '/', home)).toBeUndefined();
  });
});
