import { closeSync, existsSync, openSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startExecServer } from '@execd/exec-server/server';
import { spawnPty } from '@execd/pty-utils';
import {
  CliChild,
  listedFds,
  parseToolText,
  pidsMatching,
  runCli,
  uniqueMarker,
  waitFor,
} from '@execd/test-kit';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildUexec } from '../helpers/cli.ts';

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
    const help = await runCli(script, ['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('uexec run <command>');
    const bad = await runCli(script, ['--approval', 'sometimes']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--approval must be one of never, on-request, on-failure, untrusted');
  });

  test.skipIf(process.platform !== 'linux')(
    'run: the command inherits nothing uexec was started with (an MCP host may leave fds open)',
    async () => {
      const leaked = openSync(join(dir, 'left-open-by-the-host'), 'w');
      try {
        await using child = new CliChild(
          script,
          ['run', ...FULL_ACCESS, '--cwd', dir, 'ls -l /proc/$$/fd/'],
          {
            inheritFds: { 100: leaked },
          },
        );
        expect(await child.exited).toEqual({ code: 0, signal: null });
        expect(child.stdout).toContain('0 -> ');
        expect(child.stdout).not.toContain('left-open-by-the-host');
        // bash execs `ls` in its place: `listedFds` leaves out the folder `ls` lists.
        expect(listedFds(child.stdout)).toEqual(['0', '1', '2']);
      } finally {
        closeSync(leaked);
      }
    },
  );

  test('run prints the tool result and exits with the command exit code', async () => {
    const result = await runCli(script, ['run', ...FULL_ACCESS, '--cwd', dir, "printf 'hi\\n'; pwd; exit 3"]);
    expect(result.code).toBe(3);
    expect(parseToolText(result.stdout)).toMatchObject({ exitCode: 3, output: `hi\n${dir}\n` });
  });

  test('run --remote goes through an execd-server', async () => {
    await using server = await startExecServer({ listen: 'ws://127.0.0.1:0' });
    const result = await runCli(script, [
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
    const result = await runCli(script, [...FULL_ACCESS, '--cwd', dir], { input });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('write <id> <text>');
    expect(result.stdout).toContain('Output:\none\n');
    expect(result.stdout).toMatch(new RegExp(`\\d+\\trunning\\tpipe\\tsleep 600; : ${marker}`));
    expect(result.stdout).toContain('unknown command "bogus"; type help');
    expect(pidsMatching(marker)).toEqual([]);
  });

  test.skipIf(process.platform !== 'linux')(
    'an interactive session starts commands from a fork server; --no-fork-server and run fork uexec',
    async () => {
      // The command's shell's parent: the fork server's helper, or uexec (node) itself.
      const parentOf = 'exec cat /proc/$PPID/comm';
      const helper = await runCli(script, [...FULL_ACCESS, '--cwd', dir], { input: `${parentOf}\nquit\n` });
      expect(helper.stdout).toMatch(/Output:\n(python3|perl)\n/);
      const own = await runCli(script, [...FULL_ACCESS, '--cwd', dir, '--no-fork-server'], {
        input: `${parentOf}\nquit\n`,
      });
      expect(own.stdout).toContain('Output:\nnode\n');
      const run = await runCli(script, [...FULL_ACCESS, '--cwd', dir, 'run', 'cat /proc/$PPID/comm']);
      expect(run.stdout).toContain('Output:\nnode\n');
    },
    // Three uexec runs, each with its login-shell snapshot: slow on a busy 2-core machine.
    90_000,
  );

  test('interactive write with escapes: a tty cat echoes, Ctrl-D ends it', async () => {
    await using child = new CliChild(script, [...FULL_ACCESS, '--cwd', dir]);
    child.send(`call exec_command ${JSON.stringify({ cmd: 'cat', tty: true, yield_time_ms: 300 })}\n`);
    const id = await waitFor(() => /Process running with session ID (\d+)/.exec(child.stdout)?.[1], {
      what: 'a session id',
    });
    const prompts = (): number => child.stdout.split('uexec> ').length;
    let seen = prompts();
    child.send(`write ${id} hello\\n\n`);
    // The tty echoes at once; cat's own line may come after the write's 250 ms yield (a loaded
    // machine): poll until both have arrived, as a model would.
    const hellos = (): number => child.stdout.split('hello\r\n').length - 1;
    for (let polls = 0; polls < 4; polls++) {
      await waitFor(() => prompts() > seen, { what: `a result in ${JSON.stringify(child.stdout)}` });
      seen = prompts();
      if (hellos() >= 2) break;
      child.send(`poll ${id} 1000\n`);
    }
    expect(hellos()).toBe(2);
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
    await using child = new CliChild(script, [...FULL_ACCESS, '--cwd', dir]);
    child.send(`call exec_command {"cmd":"sleep 600; : ${marker}","yield_time_ms":300}\n`);
    await waitFor(() => child.stdout.includes('Process running with session ID'), { what: 'the session' });
    expect(pidsMatching(marker).length).toBeGreaterThan(0);
    child.child.kill('SIGTERM');
    expect(await child.exited).toEqual({ code: 143, signal: null });
    expect(pidsMatching(marker)).toEqual([]);
  });
});

// What must never reach a person raw: controls (but line breaks), format characters, separators.
const RAW_INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

/** JSON typed on a terminal: pure ASCII (everything else as a \\uXXXX escape the parser decodes). */
function typedJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[^\x20-\x7e]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

describe('uexec: the terminal approval prompt', () => {
  test('shows \\r, escape sequences and bidi overrides in the command, justification and cwd as escapes', async () => {
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(process.env)) if (value !== undefined) env[name] = value;
    env.TERM = 'dumb'; // readline then writes the prompt as is, without its own cursor sequences
    await using pty = await spawnPty({
      argv: [process.execPath, script, ...FULL_ACCESS, '--approval', 'on-request', '--cwd', dir],
      cwd: dir,
      env,
    });
    let screen = '';
    const reading = (async () => {
      for await (const { bytes } of pty.output()) screen += Buffer.from(bytes).toString('utf8');
    })();
    await waitFor(() => screen.includes('uexec> '), { what: 'the prompt' });
    const call = {
      cmd: 'rm -rf ~/x\r\x1b[2K\x1b]8;;https://evil.test\x07echo safe\x1b]8;;\x07 \u202egnp.txt\b',
      workdir: `${dir}/w\u2066x\x1b[8m`,
      sandbox_permissions: 'require_escalated',
      justification: 'tidy\r\x1b[32mharmless\u2028\u200b',
    };
    await pty.write(`call exec_command ${typedJson(call)}\r`);
    const asked = await waitFor(
      () => /\r?\nRun: [\s\S]*?\[y\]es \/ (?:\[a\]lways: [\s\S]*? \/ )?\[N\]o\? /.exec(screen)?.[0],
      { what: `the approval question in ${JSON.stringify(screen)}` },
    );
    await pty.write('n\r');
    await waitFor(() => screen.includes('rejected by user'), { what: 'the refusal' });
    await pty.write('quit\r');
    expect((await pty.exited).exitCode).toBe(0);
    await reading;
    // The terminal turns each \n into \r\n (readline's own line ends into \r\r\n); any other
    // raw control came from the model's text (whose \r is followed by ESC here, not \n).
    const lines = (text: string): string[] => text.replace(/\r+\n/g, '\n').split('\n');
    const shown = asked.replace(/\r+\n/g, '\n');
    expect(shown).toContain(
      "'rm -rf ~/x\\r\\x1b[2K\\x1b]8;;https://evil.test\\x07echo safe\\x1b]8;;\\x07 \\u202egnp.txt\\x08'",
    );
    expect(shown).toContain(`in ${dir}/w\\u2066x\\x1b[8m`);
    expect(shown).toContain('reason: tidy\\r\\x1b[32mharmless\\u2028\\u200b');
    for (const line of lines(asked)) expect(line).not.toMatch(RAW_INVISIBLE);
    // The printed tool result (the refusal names the command) is escaped too.
    const after = screen.slice(screen.indexOf(asked) + asked.length);
    expect(after).toContain('rm -rf ~/x\\r\\x1b[2K');
    for (const line of lines(after)) expect(line).not.toMatch(RAW_INVISIBLE);
  });
});

describe.skipIf(process.platform !== 'linux')(
  'uexec --sandbox workspace-write: the workdir is not writable',
  () => {
    test('interactive `call exec_command` with a workdir outside the workspace or at its parent cannot write there', async () => {
      // Outside /tmp and $TMPDIR (writable under workspace-write), so only a wrong sandbox writes there.
      const base = await mkdtemp(join('/var/tmp', 'uexec-cli-base-'));
      const outside = await mkdtemp(join('/var/tmp', 'uexec-cli-outside-'));
      try {
        const workspace = join(base, 'workspace');
        await mkdir(workspace);
        const call = (workdir: string | undefined, file: string): string =>
          `call exec_command ${JSON.stringify({ cmd: `echo planted >> ${file} && echo wrote-${file}`, login: false, ...(workdir === undefined ? {} : { workdir }) })}`;
        const input = [
          call(outside, 'outside.txt'),
          call(base, 'parent.txt'),
          call(undefined, 'inside.txt'),
          'quit',
          '',
        ].join('\n');
        const result = await runCli(script, ['--sandbox', 'workspace-write', '--cwd', workspace], {
          input,
        });
        expect(result.code).toBe(0);
        expect(existsSync(join(outside, 'outside.txt'))).toBe(false);
        expect(existsSync(join(base, 'parent.txt'))).toBe(false);
        expect(result.stdout).not.toContain('wrote-outside.txt');
        expect(result.stdout).not.toContain('wrote-parent.txt');
        expect(result.stdout.toLowerCase()).toMatch(/read-only file system|permission denied/);
        expect(result.stdout).toContain('wrote-inside.txt');
        expect(existsSync(join(workspace, 'inside.txt'))).toBe(true);
      } finally {
        await rm(base, { recursive: true, force: true });
        await rm(outside, { recursive: true, force: true });
      }
    });
  },
);
