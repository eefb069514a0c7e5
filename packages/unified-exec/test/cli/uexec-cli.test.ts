import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startExecServer } from '@execd/exec-server/server';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildUexec, runUexec, UexecProcess } from '../helpers/cli.ts';
import { pidsMatching, uniqueMarker } from '../helpers/processes.ts';
import { parseToolText } from '../helpers/tool-text.ts';
import { waitFor } from '../helpers/wait-for.ts';

let script: string;
let removeBuild: () => Promise<void>;
let dir: string;

beforeAll(async () => {
  const built = await buildUexec();
  script = built.script;
  removeBuild = built.remove;
  dir = await mkdtemp(join(tmpdir(), 'uexec-cli-'));
}, 120_000);

afterAll(async () => {
  await removeBuild?.();
  await rm(dir, { recursive: true, force: true });
});

const FULL_ACCESS = ['--sandbox', 'danger-full-access'];

describe('uexec', () => {
  test('--help prints the usage; a bad option is a usage error (exit 2)', async () => {
    const help = await runUexec(script, ['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('uexec run "<command>"');
    const bad = await runUexec(script, ['--approval', 'sometimes']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--approval must be one of never, on-request, on-failure, untrusted');
  });

  test('run prints the tool result and exits with the command exit code', async () => {
    const result = await runUexec(script, [
      'run',
      ...FULL_ACCESS,
      '--cwd',
      dir,
      "printf 'hi\\n'; pwd; exit 3",
    ]);
    expect(result.code).toBe(3);
    expect(parseToolText(result.stdout)).toMatchObject({ exitCode: 3, output: `hi\n${dir}\n` });
  });

  test('run reaps a command still running after its yield', async () => {
    const marker = uniqueMarker();
    const result = await runUexec(script, [
      'run',
      ...FULL_ACCESS,
      '--yield-time-ms',
      '300',
      `sleep 600; : ${marker}`,
    ]);
    expect(result.code).toBe(0);
    expect(parseToolText(result.stdout).sessionId).toBeGreaterThanOrEqual(1000);
    expect(pidsMatching(marker)).toEqual([]);
  });

  test('run --remote goes through an execd-server', async () => {
    await using server = await startExecServer({ listen: 'ws://127.0.0.1:0' });
    const result = await runUexec(script, [
      'run',
      ...FULL_ACCESS,
      '--remote',
      server.url,
      '--cwd',
      dir,
      'echo "remote $PWD"',
    ]);
    expect(result.code).toBe(0);
    expect(parseToolText(result.stdout).output).toBe(`remote ${dir}\n`);
  });

  test('the interactive prompt: help, exec, call, list, unknown commands, quit (which reaps)', async () => {
    const marker = uniqueMarker();
    const input = [
      'help',
      'exec echo one',
      `call exec_command {"cmd":"sleep 600; : ${marker}","yield_time_ms":300}`,
      'list',
      'bogus',
      'quit',
      '',
    ].join('\n');
    const result = await runUexec(script, [...FULL_ACCESS, '--cwd', dir], { input });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('write <id> <text>');
    expect(result.stdout).toContain('Output:\none\n');
    expect(result.stdout).toMatch(new RegExp(`\\d+\\trunning\\tpipe\\tsleep 600; : ${marker}`));
    expect(result.stdout).toContain('unknown command "bogus"; type help');
    expect(pidsMatching(marker)).toEqual([]);
  });

  test('interactive write with escapes: a tty cat echoes, Ctrl-D ends it', async () => {
    await using child = new UexecProcess(script, [...FULL_ACCESS, '--cwd', dir]);
    child.send(`call exec_command ${JSON.stringify({ cmd: 'cat', tty: true, yield_time_ms: 300 })}\n`);
    const id = await waitFor(() => /Process running with session ID (\d+)/.exec(child.stdout)?.[1], {
      what: 'a session id',
    });
    child.send(`write ${id} hello\\n\n`);
    await waitFor(() => child.stdout.includes('hello\r\nhello\r\n'), {
      what: `the echo in ${JSON.stringify(child.stdout)}`,
    });
    child.send(`write ${id} \\x04\n`);
    await waitFor(() => child.stdout.includes('Process exited with code 0'), {
      what: `the exit in ${JSON.stringify(child.stdout)}`,
    });
    child.send(`kill ${id}\nquit\n`);
    expect((await child.exited).code).toBe(0);
    expect(child.stdout).toContain(`no session ${id}`);
  });

  test('SIGTERM reaps the sessions before exiting', async () => {
    const marker = uniqueMarker();
    await using child = new UexecProcess(script, [...FULL_ACCESS, '--cwd', dir]);
    child.send(`call exec_command {"cmd":"sleep 600; : ${marker}","yield_time_ms":300}\n`);
    await waitFor(() => child.stdout.includes('Process running with session ID'), { what: 'the session' });
    expect(pidsMatching(marker).length).toBeGreaterThan(0);
    child.child.kill('SIGTERM');
    expect(await child.exited).toEqual({ code: 143, signal: null });
    expect(pidsMatching(marker)).toEqual([]);
  });
});
