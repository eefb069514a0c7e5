import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  cmdline,
  descendants,
  isProcessRunning,
  parseToolText,
  pidsMatching,
  uniqueMarker,
  waitFor,
} from '@execd/test-kit';
import { applyPatchToolSpec, execCommandToolSpec, toMcpTool, writeStdinToolSpec } from '@execd/unified-exec';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildUexec } from '../helpers/cli.ts';

let script: string;
let removeBuild: () => Promise<void>;
let dir: string;

beforeAll(async () => {
  const built = await buildUexec();
  script = built.script;
  removeBuild = built.remove;
  dir = await mkdtemp(join(tmpdir(), 'uexec-mcp-'));
}, 120_000);

afterAll(async () => {
  await removeBuild?.();
  await rm(dir, { recursive: true, force: true });
});

interface Connected extends AsyncDisposable {
  readonly client: Client;
  readonly pid: number;
  /** What the server printed on stderr so far. */
  readonly stderr: () => string;
}

/** `uexec mcp` spawned by the SDK's own stdio client transport. */
async function connect(
  args: readonly string[],
  options: {
    elicitation?: 'approve' | 'deny' | 'approve_always';
    cwd?: string;
    messages?: string[];
    choices?: unknown[];
  } = {},
): Promise<Connected> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [script, 'mcp', '--cwd', options.cwd ?? dir, ...args],
    // The SDK passes only a few variables by default; the server should see the test's
    // environment (as an MCP host's configured env), e.g. npm test's PYENV_REHASH_TIMEOUT.
    env: Object.fromEntries(
      Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined),
    ),
    stderr: 'pipe',
  });
  const client = new Client(
    { name: 'uexec-test', version: '1.0.0' },
    { capabilities: options.elicitation === undefined ? {} : { elicitation: {} } },
  );
  if (options.elicitation !== undefined) {
    const decision = options.elicitation;
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      options.messages?.push(request.params.message);
      const { params } = request;
      const schema = 'requestedSchema' in params ? params.requestedSchema : undefined;
      options.choices?.push((schema?.properties.decision as { enum?: unknown } | undefined)?.enum);
      expect(request.params.message).toContain('this command?');
      return { action: 'accept', content: { decision } };
    });
  }
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  await client.connect(transport);
  const pid = transport.pid ?? 0;
  return {
    client,
    pid,
    stderr: () => stderr,
    [Symbol.asyncDispose]: async () => {
      await client.close();
      await waitFor(() => !pidsMatching(script).includes(pid), { what: 'uexec mcp to exit' });
    },
  };
}

function textOf(result: Awaited<ReturnType<Client['callTool']>>): string {
  const [first] = result.content as Array<{ type: string; text: string }>;
  return first?.text ?? '';
}

describe('uexec mcp', () => {
  test('lists exec_command, write_stdin and apply_patch (function variant) with annotations', async () => {
    await using mcp = await connect(['--sandbox', 'danger-full-access']);
    const { tools } = await mcp.client.listTools();
    const hints = { readOnlyHint: false, destructiveHint: true, idempotentHint: false };
    expect(tools).toEqual([
      {
        ...toMcpTool(execCommandToolSpec()),
        annotations: { title: 'Run a shell command', ...hints, openWorldHint: true },
      },
      {
        ...toMcpTool(writeStdinToolSpec()),
        annotations: { title: 'Write to (or poll) a running command', ...hints, openWorldHint: true },
      },
      {
        ...toMcpTool(applyPatchToolSpec()),
        annotations: { title: 'Edit files with a patch', ...hints, openWorldHint: false },
      },
    ]);
  });

  test('says on stderr at start what it serves, where, and under which sandbox', async () => {
    await using mcp = await connect(['--approval', 'never']);
    await waitFor(() => mcp.stderr().includes('\n'), { what: 'the start line' });
    expect(mcp.stderr()).toMatch(
      new RegExp(
        `^uexec \\S+ mcp: serving exec_command, write_stdin, apply_patch over stdio; commands run in ${dir}; sandbox workspace-write \\(bubblewrap [^)]+\\); approval never; shell snapshot on\n`,
      ),
    );
  });

  test('apply_patch through MCP answers as the original (goldens)', async () => {
    const golden = JSON.parse(
      await readFile(
        // The golden recorded from the original lives with unified-exec's oracle fixtures.
        join(
          import.meta.dirname,
          '../../../unified-exec/test/oracle/fixtures/apply-patch/apply-patch-bypass.json',
        ),
        'utf8',
      ),
    ) as { steps: Array<{ call: string; input?: string; arguments?: unknown; output: string }> };
    const work = join(dir, 'apply-patch');
    await mkdir(work);
    await using mcp = await connect(['--sandbox', 'danger-full-access', '--approval', 'never'], {
      cwd: work,
    });
    const mask = (text: string, workdir: RegExp | string): string =>
      text
        .replaceAll(workdir, 'W')
        .replace(/^Wall time: \d+(\.\d+)? seconds$/gm, 'Wall time: <WALL> seconds');
    // Steps that need no setup: two added files, an invalid header, an empty patch, heredoc via exec_command.
    const picked = golden.steps.filter(
      (step, index) =>
        index === 0 ||
        step.output.includes('Frobnicate') ||
        step.output === 'patch rejected: empty patch' ||
        (step.call === 'exec_command' && step.output.endsWith('\nA h.txt\n')),
    );
    expect(picked).toHaveLength(4);
    for (const step of picked) {
      const result = await mcp.client.callTool(
        step.call === 'apply_patch'
          ? { name: 'apply_patch', arguments: { input: step.input } }
          : { name: 'exec_command', arguments: step.arguments as Record<string, unknown> },
      );
      expect(mask(textOf(result), work)).toBe(mask(step.output, /\/tmp\/codex-oracle-[A-Za-z0-9]+\/work/g));
      expect(result.isError).toBe(!step.output.includes('Exit code: 0'));
    }
    expect(await readFile(join(work, 'src', 'a.txt'), 'utf8')).toBe('hello\n');
    expect(await readFile(join(work, 'h.txt'), 'utf8')).toBe('hi\n');
  });

  test('exec_command and write_stdin through MCP; errors come back as isError text', async () => {
    await using mcp = await connect(['--sandbox', 'danger-full-access']);
    const echo = await mcp.client.callTool({ name: 'exec_command', arguments: { cmd: 'echo over mcp' } });
    expect(echo.isError).toBe(false);
    expect(parseToolText(textOf(echo))).toMatchObject({ exitCode: 0, output: 'over mcp\n' });

    const cat = await mcp.client.callTool({
      name: 'exec_command',
      arguments: { cmd: 'cat', tty: true, yield_time_ms: 300 },
    });
    const sessionId = parseToolText(textOf(cat)).sessionId;
    expect(sessionId).toBeGreaterThanOrEqual(1000);
    const written = await mcp.client.callTool({
      name: 'write_stdin',
      arguments: { session_id: sessionId, chars: 'ping\n', yield_time_ms: 1000 },
    });
    expect(parseToolText(textOf(written)).output).toBe('ping\r\nping\r\n');

    const unknown = await mcp.client.callTool({ name: 'write_stdin', arguments: { session_id: 7 } });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toBe('write_stdin failed: Unknown process id 7');
    const bad = await mcp.client.callTool({ name: 'exec_command', arguments: {} });
    expect(textOf(bad)).toBe('failed to parse function arguments: missing field `cmd` at line 1 column 2');
  });

  test('closing the client ends the server and reaps its sessions', async () => {
    const marker = uniqueMarker();
    {
      await using mcp = await connect(['--sandbox', 'danger-full-access']);
      const started = await mcp.client.callTool({
        name: 'exec_command',
        arguments: { cmd: `sleep 600; : ${marker}`, yield_time_ms: 300 },
      });
      expect(parseToolText(textOf(started)).sessionId).toBeDefined();
      expect(pidsMatching(marker).length).toBeGreaterThan(0);
    }
    await waitFor(() => pidsMatching(marker).length === 0, { what: 'the session to be reaped' });
  });

  // With a shell snapshot, commands run through the in-process exec-server backend; without one,
  // they are spawned directly: both must be guarded.
  test.skipIf(process.platform !== 'linux').each([[[]], [['--no-shell-snapshot']]])(
    'a uexec killed outright (SIGKILL) takes its commands with it (%j)',
    async (flags: string[]) => {
      const marker = uniqueMarker();
      await using mcp = await connect(['--sandbox', 'danger-full-access', ...flags]);
      // On pipes, a sleeper nothing reaches once its server is gone (it never writes); in a
      // terminal, one that ignores the hang-up of its closed terminal.
      for (const [cmd, tty] of [
        [`sleep 600; : ${marker}`, false],
        [`trap "" HUP; sleep 601; : ${marker}`, true],
      ] as const) {
        const started = await mcp.client.callTool({
          name: 'exec_command',
          arguments: { cmd, tty, yield_time_ms: 300 },
        });
        expect(parseToolText(textOf(started)).sessionId).toBeDefined();
      }
      // Past the login profile (which may still write, and die of SIGPIPE): both sleep.
      const sleepers = (): number[] =>
        pidsMatching(marker).flatMap((shell) =>
          descendants(shell)
            .filter((child) => cmdline(child.pid).startsWith('sleep 60'))
            .map((child) => child.pid),
        );
      await waitFor(() => sleepers().length === 2, { what: 'both commands to sleep' });
      const running = [...pidsMatching(marker), ...sleepers()];
      process.kill(mcp.pid, 'SIGKILL');
      await waitFor(() => running.every((pid) => !isProcessRunning(pid)), {
        what: 'both shells and both sleepers to die with uexec',
        timeoutMs: 20_000,
      });
    },
  );

  test('approvals go through MCP elicitation when the client supports it', async () => {
    await using approving = await connect(['--sandbox', 'danger-full-access', '--approval', 'untrusted'], {
      elicitation: 'approve',
    });
    const ran = await approving.client.callTool({
      name: 'exec_command',
      // `printf` is not on the known-safe list (`echo` would run without asking).
      arguments: { cmd: "printf 'approved\\n'" },
    });
    expect(parseToolText(textOf(ran)).output).toBe('approved\n');

    await using denying = await connect(['--sandbox', 'danger-full-access', '--approval', 'untrusted'], {
      elicitation: 'deny',
    });
    const refused = await denying.client.callTool({
      name: 'exec_command',
      arguments: { cmd: 'printf nope' },
    });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain('Rejected(\\"rejected by user\\")');
  });

  test('"always" is offered with the proposed prefix and allows the command from then on', async () => {
    const choices: unknown[] = [];
    await using mcp = await connect(['--sandbox', 'danger-full-access', '--approval', 'untrusted'], {
      elicitation: 'approve_always',
      choices,
    });
    const call = { name: 'exec_command', arguments: { cmd: "printf 'always\\n'" } };
    expect(parseToolText(textOf(await mcp.client.callTool(call))).output).toBe('always\n');
    expect(parseToolText(textOf(await mcp.client.callTool(call))).output).toBe('always\n');
    // Asked once: the prefix became a rule of the session.
    expect(choices).toEqual([['approve', 'approve_always', 'deny']]);
  });

  test('without elicitation support, commands that need approval are refused, saying nobody was asked', async () => {
    await using mcp = await connect(['--sandbox', 'danger-full-access', '--approval', 'untrusted']);
    const refused = await mcp.client.callTool({ name: 'exec_command', arguments: { cmd: 'printf nope' } });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toBe(
      'exec_command was not run: it needs approval (--approval untrusted), and uexec mcp asks for ' +
        'approvals through MCP elicitation, which this client does not support, so nobody was asked. ' +
        'Use a client with elicitation, or start uexec mcp with --approval never (commands then run ' +
        'without asking, inside the --sandbox profile).',
    );
    expect(textOf(refused)).not.toContain('rejected by user');
    expect(mcp.stderr()).toContain('uexec mcp: this client does not support elicitation');
    // What needs no approval still runs.
    const ran = await mcp.client.callTool({ name: 'exec_command', arguments: { cmd: 'echo fine' } });
    expect(parseToolText(textOf(ran)).output).toBe('fine\n');
  });
});

// What must never reach a person raw: controls (but the message's own line breaks), format
// characters (bidi, zero-width), separators.
const RAW_INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

describe('uexec mcp: approval elicitations show what the model chose visibly', () => {
  test('\\r, escape sequences and bidi overrides in the command, justification and cwd arrive escaped', async () => {
    const messages: string[] = [];
    await using mcp = await connect(['--sandbox', 'danger-full-access', '--approval', 'on-request'], {
      elicitation: 'deny',
      messages,
    });
    const cmd = 'rm -rf ~/x\r\x1b[2K\x1b]8;;https://evil.test\x07echo safe\x1b]8;;\x07 \u202egnp.txt\b';
    const refused = await mcp.client.callTool({
      name: 'exec_command',
      arguments: {
        cmd,
        workdir: `${dir}/w\u2066x\x1b[8m`,
        sandbox_permissions: 'require_escalated',
        justification: 'tidy\r\x1b[32mharmless\u2028\u200b',
      },
    });
    expect(refused.isError).toBe(true);
    expect(messages).toHaveLength(1);
    const message = messages[0] ?? '';
    expect(message).toContain(
      "'rm -rf ~/x\\r\\x1b[2K\\x1b]8;;https://evil.test\\x07echo safe\\x1b]8;;\\x07 \\u202egnp.txt\\x08'",
    );
    expect(message).toContain(`in ${dir}/w\\u2066x\\x1b[8m`);
    expect(message).toContain('Reason: tidy\\r\\x1b[32mharmless\\u2028\\u200b');
    for (const line of message.split('\n')) expect(line).not.toMatch(RAW_INVISIBLE);
  });
});

describe.skipIf(process.platform !== 'linux')(
  'uexec mcp --sandbox workspace-write: the workdir is not writable',
  () => {
    // Outside /tmp and $TMPDIR (writable under workspace-write), so only a wrong sandbox writes there.
    let base: string;
    let workspace: string;
    let outside: string;
    beforeAll(async () => {
      base = await mkdtemp(join('/var/tmp', 'uexec-mcp-base-'));
      workspace = join(base, 'workspace');
      await mkdir(workspace);
      outside = await mkdtemp(join('/var/tmp', 'uexec-mcp-outside-'));
    });
    afterAll(async () => {
      await rm(base, { recursive: true, force: true });
      await rm(outside, { recursive: true, force: true });
    });

    // `login: false` throughout: the host's login files are not under test here.
    test('exec_command with workdir outside the workspace, or its parent, cannot write there', async () => {
      // No elicitation: the unsandboxed retry after the denial is refused (nobody to ask).
      await using mcp = await connect(['--sandbox', 'workspace-write'], { cwd: workspace });
      for (const workdir of [outside, base]) {
        const result = await mcp.client.callTool({
          name: 'exec_command',
          arguments: { cmd: 'echo planted >> planted.txt && echo wrote', workdir, login: false },
        });
        expect(result.isError).toBe(false);
        const parsed = parseToolText(textOf(result));
        expect(parsed.exitCode).toBe(1);
        expect(parsed.output.toLowerCase()).toMatch(/read-only file system|permission denied/);
        expect(existsSync(join(workdir, 'planted.txt'))).toBe(false);
      }
      // An absolute target from a workdir outside is refused the same way.
      const absolute = await mcp.client.callTool({
        name: 'exec_command',
        arguments: { cmd: `echo planted >> ${join(base, 'abs.txt')}`, workdir: outside, login: false },
      });
      expect(parseToolText(textOf(absolute)).exitCode).toBe(1);
      expect(existsSync(join(base, 'abs.txt'))).toBe(false);
      // It may run there: it reads fine.
      const pwd = await mcp.client.callTool({
        name: 'exec_command',
        arguments: { cmd: 'pwd', workdir: outside, login: false },
      });
      expect(parseToolText(textOf(pwd))).toMatchObject({ exitCode: 0, output: `${outside}\n` });
    });

    test('a command in the workspace still writes', async () => {
      await using mcp = await connect(['--sandbox', 'workspace-write'], { cwd: workspace });
      const result = await mcp.client.callTool({
        name: 'exec_command',
        arguments: { cmd: 'echo inside >> inside.txt && echo wrote', login: false },
      });
      expect(parseToolText(textOf(result))).toMatchObject({ exitCode: 0, output: 'wrote\n' });
      expect(await readFile(join(workspace, 'inside.txt'), 'utf8')).toBe('inside\n');
    });
  },
);
