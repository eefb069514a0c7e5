// The MCP host configurations in the root README, run as the host would: the SDK's stdio client
// starts `command` with `args` (the placeholders replaced), lists the tools and runs a command.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseToolText } from '@execd/test-kit';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildUexec } from '../helpers/cli.ts';

const README = join(import.meta.dirname, '..', '..', '..', '..', 'README.md');

let script: string;
let removeBuild: () => Promise<void>;
let project: string;

beforeAll(async () => {
  const built = await buildUexec();
  script = built.script;
  removeBuild = built.remove;
  project = await mkdtemp(join(tmpdir(), 'uexec-mcp-host-'));
}, 120_000);

afterAll(async () => {
  await removeBuild?.();
  await rm(project, { recursive: true, force: true });
});

// biome-ignore lint/suspicious/noTemplateCurlyInString: VS Code's variable, written literally in mcp.json.
const VSCODE_WORKSPACE_FOLDER = '${workspaceFolder}';

interface ServerEntry {
  readonly type?: string;
  readonly command: string;
  readonly args: string[];
}

/** The server entries of the README's MCP host section, by the key holding them. */
async function readmeEntries(): Promise<Array<{ key: string; entry: ServerEntry }>> {
  const text = await readFile(README, 'utf8');
  const section = text.slice(text.indexOf('### uexec in an MCP host'));
  const blocks = [...section.matchAll(/```json\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
  return blocks.map((block) => {
    const config = JSON.parse(block) as Record<string, Record<string, ServerEntry>>;
    const [key] = Object.keys(config) as [string];
    return { key, entry: config[key]?.execd as ServerEntry };
  });
}

describe('README: uexec in an MCP host', () => {
  test('Claude Desktop / Cursor (mcpServers) and VS Code (servers) entries start a working server', async () => {
    const entries = await readmeEntries();
    expect(entries.map(({ key }) => key)).toEqual(['mcpServers', 'servers']);
    for (const { key, entry } of entries) {
      if (key === 'servers') expect(entry.type).toBe('stdio');
      expect(entry.command).toBe('node');
      const args = entry.args.map((arg) =>
        arg
          .replace('/path/to/execd/packages/uexec/dist/cli/uexec.js', script)
          .replace('/path/to/your/project', project)
          .replace(VSCODE_WORKSPACE_FOLDER, project),
      );
      expect(args).toContain('--cwd');
      // Hosts start servers from anywhere: Claude Desktop from `/`.
      const transport = new StdioClientTransport({
        command: process.execPath,
        args,
        cwd: '/',
        env: Object.fromEntries(
          Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined),
        ),
        stderr: 'pipe',
      });
      const client = new Client({ name: `readme-${key}`, version: '1.0.0' });
      await client.connect(transport);
      try {
        const { tools } = await client.listTools();
        expect(tools.map((tool) => tool.name)).toEqual(['exec_command', 'write_stdin', 'apply_patch']);
        const pwd = await client.callTool({ name: 'exec_command', arguments: { cmd: 'pwd', login: false } });
        const [content] = pwd.content as Array<{ text: string }>;
        expect(parseToolText(content?.text ?? '')).toMatchObject({ exitCode: 0, output: `${project}\n` });
      } finally {
        await client.close();
      }
    }
  });
});
