// `uexec run` as a person uses it: version and help, unquoted commands, running to the end,
// --timeout, Ctrl-C, the shell snapshot, the refused workspaces and nothing left behind.
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CliChild, parseToolText, pidsMatching, runCli, uniqueMarker, waitFor } from '@execd/test-kit';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import packageJson from '../../package.json' with { type: 'json' };
import { buildUexec } from '../helpers/cli.ts';

let script: string;
let removeBuild: () => Promise<void>;
let dir: string;

beforeAll(async () => {
  const built = await buildUexec();
  script = built.script;
  removeBuild = built.remove;
  dir = await mkdtemp(join(tmpdir(), 'uexec-run-'));
}, 120_000);

afterAll(async () => {
  await removeBuild?.();
  await rm(dir, { recursive: true, force: true });
});

const FULL_ACCESS = ['--sandbox', 'danger-full-access'];

/** The tool results `run` printed, one per call. */
function results(stdout: string): ReturnType<typeof parseToolText>[] {
  return stdout
    .split(/^(?=Chunk ID: )/m)
    .filter((text) => text.length > 0)
    .map(parseToolText);
}

describe('uexec: version and help', () => {
  test("--version, help, help run, run --help; a bad run option shows run's usage", async () => {
    const version = await runCli(script, ['--version']);
    expect(version).toMatchObject({ code: 0, stdout: `uexec ${packageJson.version}\n` });
    const help = await runCli(script, ['help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('uexec help [COMMAND]');
    for (const argv of [
      ['help', 'run'],
      ['run', '--help'],
    ]) {
      const run = await runCli(script, argv);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('--timeout SECONDS');
      expect(run.stdout).toContain('uexec run [OPTIONS] -- <command> [ARGS...]');
    }
    const mcp = await runCli(script, ['help', 'mcp']);
    expect(mcp.stdout).toContain('elicitation');
    const bad = await runCli(script, ['run', '--bogus', 'ls']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("Unknown option '--bogus'");
    expect(bad.stderr).toContain('--timeout SECONDS');
  });
});

describe('uexec run', () => {
  test('an unquoted command and one after -- run with their arguments as typed', async () => {
    await writeFile(join(dir, 'listed.txt'), 'x');
    const plain = await runCli(script, ['run', ...FULL_ACCESS, '--cwd', dir, 'ls', '-1a'], {
      env: { ...process.env, UEXEC_LOG: 'debug' },
    });
    expect(plain.code).toBe(0);
    expect(parseToolText(plain.stdout).output).toBe('.\n..\nlisted.txt\n');
    // UEXEC_LOG lines carry execd-server's field names (ts, level, msg).
    const records = plain.stderr
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records.length).toBeGreaterThan(0);
    for (const record of records) {
      expect(Object.keys(record).slice(0, 3)).toEqual(['ts', 'level', 'msg']);
    }
    const dashed = await runCli(script, [
      'run',
      ...FULL_ACCESS,
      '--cwd',
      dir,
      '--',
      'printf',
      '[%s]\\n',
      'a b',
      '$HOME',
    ]);
    expect(parseToolText(dashed.stdout)).toMatchObject({ exitCode: 0, output: '[a b]\n[$HOME]\n' });
  });

  test('runs past the yield to the end, printing each result, and exits with its code', async () => {
    const result = await runCli(script, [
      'run',
      ...FULL_ACCESS,
      '--yield-time-ms',
      '250',
      'echo first; sleep 1; echo last; exit 7',
    ]);
    expect(result.code).toBe(7);
    const printed = results(result.stdout);
    expect(printed.length).toBeGreaterThanOrEqual(2);
    expect(printed[0]).toMatchObject({ exitCode: undefined, output: 'first\n' });
    expect(printed[0]?.sessionId).toBeGreaterThanOrEqual(1000);
    expect(printed.at(-1)?.exitCode).toBe(7);
    expect(printed.map((item) => item.output).join('')).toBe('first\nlast\n');
  });

  test('--timeout stops the command and exits 124', async () => {
    const marker = uniqueMarker();
    const result = await runCli(script, [
      'run',
      ...FULL_ACCESS,
      '--timeout',
      '1',
      `echo started; sleep 600; : ${marker}`,
    ]);
    expect(result.code).toBe(124);
    expect(result.stderr).toContain('uexec: stopped the command after 1 s (--timeout)');
    expect(results(result.stdout)[0]?.output).toBe('started\n');
    expect(pidsMatching(marker)).toEqual([]);
  });

  test('Ctrl-C (SIGINT) stops the command and exits 130, printing nothing about the vanished process', async () => {
    const marker = uniqueMarker();
    await using child = new CliChild(script, [
      'run',
      ...FULL_ACCESS,
      '--yield-time-ms',
      '250',
      `echo started; sleep 600; : ${marker}`,
    ]);
    await waitFor(() => child.stdout.includes('started'), { what: 'the first result' });
    child.child.kill('SIGINT');
    expect(await child.exited).toEqual({ code: 130, signal: null });
    expect(pidsMatching(marker)).toEqual([]);
    expect(`${child.stdout}${child.stderr}`).not.toMatch(/unknown process/i);
    expect(child.stderr).toBe('');
  });

  test("the shell snapshot is on by default (the rc file's functions) and --no-shell-snapshot turns it off", async () => {
    const home = join(dir, 'home');
    await mkdir(home, { recursive: true });
    await writeFile(join(home, '.bashrc'), 'uexec_rc_fn() { echo "from-rc:$1"; }\n');
    const env = { ...process.env, HOME: home, SHELL: '/bin/bash' };
    const args = ['run', ...FULL_ACCESS, '--cwd', dir, 'uexec_rc_fn ok'];
    const snapshot = await runCli(script, args, { env });
    expect(parseToolText(snapshot.stdout)).toMatchObject({ exitCode: 0, output: 'from-rc:ok\n' });
    const plain = await runCli(script, ['--no-shell-snapshot', ...args], { env });
    expect(parseToolText(plain.stdout).exitCode).toBe(127);
  });
});

describe('uexec: the workspace', () => {
  test('from / or $HOME without --cwd, workspace-write is refused; read-only and --cwd still work', async () => {
    const marker = join('/etc', `${uniqueMarker()}.planted`);
    for (const argv of [['run', `touch ${marker}`], ['mcp'], []]) {
      const refused = await runCli(script, argv, { cwd: '/' });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('uexec: refusing to make / (the root of the file system) writable');
      expect(refused.stderr).toContain('--cwd DIR');
    }
    const home = await runCli(script, ['run', 'true'], { cwd: dir, env: { ...process.env, HOME: dir } });
    expect(home.code).toBe(2);
    expect(home.stderr).toContain('(your home folder)');
    const readOnly = await runCli(script, ['run', '--sandbox', 'read-only', 'echo reading'], { cwd: '/' });
    expect(parseToolText(readOnly.stdout)).toMatchObject({ exitCode: 0, output: 'reading\n' });
    const explicit = await runCli(script, ['run', ...FULL_ACCESS, '--cwd', '/', 'pwd'], { cwd: '/' });
    expect(parseToolText(explicit.stdout).output).toBe('/\n');
    const { existsSync } = await import('node:fs');
    expect(existsSync(marker)).toBe(false);
  });

  test.skipIf(process.platform !== 'linux')(
    'a sandboxed run leaves nothing in the workspace (no .codex, .agents or .git mount points)',
    async () => {
      for (let attempt = 0; attempt < 2; attempt++) {
        const workspace = await mkdtemp(join('/var/tmp', 'uexec-litter-'));
        try {
          const result = await runCli(script, ['run', '--cwd', workspace, 'echo hi']);
          expect(parseToolText(result.stdout)).toMatchObject({ exitCode: 0, output: 'hi\n' });
          expect(await readdir(workspace)).toEqual([]);
        } finally {
          await rm(workspace, { recursive: true, force: true });
        }
      }
    },
  );
});
