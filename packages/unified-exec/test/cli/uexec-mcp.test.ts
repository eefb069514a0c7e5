import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { execCommandToolSpec, toMcpTool, writeStdinToolSpec } from '../../src/index.ts';
import { buildUexec } from '../helpers/cli.ts';
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
  dir = await mkdtemp(join(tmpdir(), 'uexec-mcp-'));
}, 120_000);

afterAll(async () => {
  await removeBuild?.();
  await rm(dir, { recursive: true, force: true });
});

interface Connected extends AsyncDisposable {
  readonly client: Client;
  readonly pid: number;
}

/** `uexec mcp` spawned by the SDK's own stdio client transport. */
async function connect(
  args: readonly string[],
  options: { elicitation?: 'approve' | 'deny' } = {},
): Promise<Connected> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [script, 'mcp', '--cwd', dir, ...args],
    stderr: 'pipe',
  });
  const client = new Client(
    { name: 'uexec-test', version: '1.0.0' },
    { capabilities: options.elicitation === undefined ? {} : { elicitation: {} } },
  );
  if (options.elicitation !== undefined) {
    const decision = options.elicitation;
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      expect(request.params.message).toContain('this command?');
      return { action: 'accept', content: { decision } };
    });
  }
  await client.connect(transport);
  const pid = transport.pid ?? 0;
  return {
    client,
    pid,
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
  test('lists exec_command and write_stdin with the original schemas', async () => {
    await using mcp = await connect(['--sandbox', 'danger-full-access']);
    const { tools } = await mcp.client.listTools();
    expect(tools).toEqual([toMcpTool(execCommandToolSpec()), toMcpTool(writeStdinToolSpec())]);
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

  test('approvals go through MCP elicitation when the client supports it', async () => {
    await using approving = await connect(['--sandbox', 'danger-full-access', '--approval', 'untrusted'], {
      elicitation: 'approve',
    });
    const ran = await approving.client.callTool({
      name: 'exec_command',
      arguments: { cmd: 'echo approved' },
    });
    expect(parseToolText(textOf(ran)).output).toBe('approved\n');

    await using denying = await connect(['--sandbox', 'danger-full-access', '--approval', 'untrusted'], {
      elicitation: 'deny',
    });
    const refused = await denying.client.callTool({ name: 'exec_command', arguments: { cmd: 'echo nope' } });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain('Rejected(\\"rejected by user\\")');
  });

  test('without elicitation support, commands that need approval are denied', async () => {
    await using mcp = await connect(['--sandbox', 'danger-full-access', '--approval', 'untrusted']);
    const refused = await mcp.client.callTool({ name: 'exec_command', arguments: { cmd: 'echo nope' } });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toBe(
      'exec_command failed for `/bin/bash -lc \'echo nope\'`: CreateProcess { message: "Rejected(\\"rejected by user\\")" }',
    );
  });
});
