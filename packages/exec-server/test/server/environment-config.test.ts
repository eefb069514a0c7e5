// `environmentConfig/read` through a real exec-server over real files. Expected layers are what
// Codex 0.169.0's exec-server returned for the same files (live probes).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileUri } from '@execd/protocol';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { RawWsClient } from '../helpers/raw-ws-client.ts';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';

interface Layer {
  source: string;
  baseDir: string;
  toml: string;
}
interface ConfigRead {
  userHomeDir: string;
  codexHomeDir: string;
  hostname: string;
  config: { layers: Layer[]; cloudInsertionIndex: number };
  requirements: { layers: Layer[]; cloudInsertionIndex: number };
}

const root = mkdtempSync(join(tmpdir(), 'execd-config-'));
const home = join(root, 'home');
const codexHome = join(home, '.codex');
const system = join(root, 'etc-codex');
const project = join(root, 'proj');
const sub = join(project, 'sub');
const untrusted = join(root, 'untrusted');
const bad = join(root, 'bad');

function write(path: string, text: string): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
}

beforeAll(() => {
  write(
    join(codexHome, 'config.toml'),
    `model = "x"
[mcp_servers.x]
command = "echo"
args = ["a", "b"]
env = { A = "1" }
[projects."${project}"]
trust_level = "trusted"
[projects."${bad}"]
trust_level = "trusted"
`,
  );
  mkdirSync(join(project, '.git'), { recursive: true });
  write(join(project, '.codex', 'config.toml'), '[mcp_servers.p]\ncommand = "pp"\n');
  write(join(sub, '.codex', 'config.toml'), '[mcp_servers.s]\ncommand = "ss"\n');
  write(join(untrusted, '.codex', 'config.toml'), '[mcp_servers.u]\ncommand = "uu"\n');
  mkdirSync(join(bad, '.git'), { recursive: true });
  write(join(bad, '.codex', 'config.toml'), '[mcp_servers.bad\nx=\n');
  write(join(system, 'requirements.toml'), '[mcp_servers.x]\nidentity = { command = "echo" }\n');
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

const X_TOML = '[mcp_servers.x]\ncommand = "echo"\nargs = ["a", "b"]\n\n[mcp_servers.x.env]\nA = "1"\n';

describe('environmentConfig/read', () => {
  let server: TestServer;
  let client: RawWsClient;
  beforeAll(async () => {
    server = await startTestServer({ fake: true, executorEnv: { HOME: home }, systemConfigDir: system });
    client = await RawWsClient.connect(server.url);
    await client.initialize();
  });
  afterAll(async () => {
    await client.close();
    await server.close();
  });

  const read = (cwd: string, configPaths: string[][], requirementsPaths: string[][] = []) =>
    client.call<ConfigRead>('environmentConfig/read', {
      cwd: pathToFileUri(cwd),
      configPaths,
      requirementsPaths,
    });

  test('user and trusted project layers from the project root down to cwd, cut to the selectors', async () => {
    const result = await read(sub, [['mcp_servers']], [['mcp_servers']]);
    expect(result).toMatchObject({
      userHomeDir: pathToFileUri(home),
      codexHomeDir: pathToFileUri(codexHome),
      hostname: hostname(),
    });
    expect(result.config).toEqual({
      layers: [
        {
          source: `user (${join(codexHome, 'config.toml')})`,
          baseDir: pathToFileUri(codexHome),
          toml: X_TOML,
        },
        {
          source: `project (${join(project, '.codex', 'config.toml')})`,
          baseDir: pathToFileUri(join(project, '.codex')),
          toml: '[mcp_servers.p]\ncommand = "pp"\n',
        },
        {
          source: `project (${join(sub, '.codex', 'config.toml')})`,
          baseDir: pathToFileUri(join(sub, '.codex')),
          toml: '[mcp_servers.s]\ncommand = "ss"\n',
        },
      ],
      cloudInsertionIndex: 0,
    });
    expect(result.requirements).toEqual({
      layers: [
        {
          source: join(system, 'requirements.toml'),
          baseDir: pathToFileUri(system),
          toml: '[mcp_servers.x.identity]\ncommand = "echo"\n',
        },
      ],
      cloudInsertionIndex: 1,
    });
  });

  test('an untrusted project is not read; a layer without the selected keys is left out', async () => {
    const result = await read(untrusted, [['mcp_servers']]);
    expect(result.config.layers.map((layer) => layer.source)).toEqual([
      `user (${join(codexHome, 'config.toml')})`,
    ]);
    expect((await read(untrusted, [['nothing_here']])).config.layers).toEqual([]);
  });

  test('a system layer is first and moves the cloud insertion point after it', async () => {
    write(join(system, 'config.toml'), 'model = "system"\n');
    try {
      const result = await read(untrusted, [['model']]);
      expect(result.config.cloudInsertionIndex).toBe(1);
      expect(result.config.layers.map((layer) => layer.toml)).toEqual([
        'model = "system"\n',
        'model = "x"\n',
      ]);
    } finally {
      rmSync(join(system, 'config.toml'));
    }
  });

  test('a malformed trusted project file is -32603 naming it; bad selectors and cwd are -32602', async () => {
    const params = (cwd: string, configPaths: string[][]) => ({ cwd, configPaths, requirementsPaths: [] });
    const malformed = await client.errorOf(
      client.request('environmentConfig/read', params(pathToFileUri(bad), [['mcp_servers']])),
    );
    expect(malformed.code).toBe(-32603);
    expect(malformed.message).toContain(join(bad, '.codex', 'config.toml'));
    for (const invalid of [
      params(pathToFileUri(bad), []),
      params(pathToFileUri(bad), [[]]),
      params(bad, [['a']]),
    ])
      expect((await client.errorOf(client.request('environmentConfig/read', invalid))).code).toBe(-32602);
    expect(await client.call('environment/status', {})).toEqual({ status: 'ready' });
  });
});
