// `capabilityRoots/discoverV1` through a real exec-server over real folders. The expected shape is
// what Codex 0.169.0's exec-server answered for the same tree (live probe).
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileUri } from '@execd/protocol';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { RawWsClient } from '../helpers/raw-ws-client.ts';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';

const base = mkdtempSync(join(tmpdir(), 'execd-caproots-'));
const root = join(base, 'r1');
const plugin = join(base, 'plugin');

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

const S1 = '---\nname: s1\ndescription: first skill\n---\nbody\n';

beforeAll(() => {
  write(join(root, '.agents/skills/s1/SKILL.md'), S1);
  write(join(root, '.agents/skills/s1/agents/openai.yaml'), 'interface: {}\n');
  write(join(root, 'skills/s2/SKILL.md'), '---\nname: s2\n---\n');
  write(join(root, '.codex/skills/s3/SKILL.md'), '---\nname: s3\n---\n');
  write(join(root, 'a/b/c/d/e/f/SKILL.md'), 'deepest listed folder\n');
  write(join(root, 'a/b/c/d/e/f/g/SKILL.md'), 'too deep\n');
  mkdirSync(join(root, 'bad'));
  writeFileSync(join(root, 'bad/SKILL.md'), Buffer.from([0xff, 0xfe]));
  symlinkSync(root, join(root, 'loop'));
  write(join(plugin, '.codex-plugin/plugin.json'), '{"name":"p","mcpServers":"./mcp.json"}');
  write(join(plugin, 'mcp.json'), '{"mcpServers":{}}');
  write(join(plugin, 'skills/ps/SKILL.md'), '---\nname: ps\n---\n');
  write(join(plugin, 'nested/.claude-plugin/plugin.json'), '{"name":"n"}');
});

afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('capabilityRoots/discoverV1', () => {
  let server: TestServer;
  let client: RawWsClient;
  beforeAll(async () => {
    server = await startTestServer({ fake: true });
    client = await RawWsClient.connect(server.url);
    await client.initialize();
  });
  afterAll(async () => {
    await client.close();
    await server.close();
  });

  const discover = (roots: unknown[]) =>
    client.call<{ roots: Record<string, unknown>[] }>('capabilityRoots/discoverV1', { roots });

  test('skills in path order with their metadata; too deep and non-UTF-8 ones are left out', async () => {
    const { roots } = await discover([{ id: 'a', path: pathToFileUri(root) }]);
    expect(roots).toHaveLength(1);
    const [found] = roots as [Record<string, unknown>];
    expect(found).toMatchObject({
      id: 'a',
      path: pathToFileUri(root),
      plugin: null,
      namespaceManifests: [],
      error: null,
    });
    const skills = found.skills as { instructions: { path: string; contents: string }; metadata: unknown }[];
    expect(skills.map((skill) => skill.instructions.path)).toEqual([
      pathToFileUri(join(root, '.agents/skills/s1/SKILL.md')),
      pathToFileUri(join(root, '.codex/skills/s3/SKILL.md')),
      // Folders are listed down to depth 6 (`f`), so its file at depth 7 is found; `g`'s is not.
      pathToFileUri(join(root, 'a/b/c/d/e/f/SKILL.md')),
      pathToFileUri(join(root, 'skills/s2/SKILL.md')),
    ]);
    expect(skills[0]).toEqual({
      instructions: { path: pathToFileUri(join(root, '.agents/skills/s1/SKILL.md')), contents: S1 },
      metadata: {
        path: pathToFileUri(join(root, '.agents/skills/s1/agents/openai.yaml')),
        contents: 'interface: {}\n',
      },
    });
    expect((found.warnings as string[]).some((w) => w.includes('is not UTF-8'))).toBe(true);
  });

  test('a plugin root: its manifest, the MCP config it names, nested plugin manifests', async () => {
    const { roots } = await discover([{ id: 'p', path: pathToFileUri(plugin), sandbox: null }]);
    const [found] = roots as [Record<string, unknown>];
    expect(found.plugin).toEqual({
      manifest: {
        path: pathToFileUri(join(plugin, '.codex-plugin/plugin.json')),
        contents: '{"name":"p","mcpServers":"./mcp.json"}',
      },
      mcpConfig: { path: pathToFileUri(join(plugin, 'mcp.json')), contents: '{"mcpServers":{}}' },
      appsConfig: null,
    });
    expect((found.namespaceManifests as { path: string }[]).map((m) => m.path)).toEqual([
      pathToFileUri(join(plugin, '.codex-plugin/plugin.json')),
      pathToFileUri(join(plugin, 'nested/.claude-plugin/plugin.json')),
    ]);
    // A root inside a plugin inherits the plugin's manifest.
    const inner = await discover([{ id: 'i', path: pathToFileUri(join(plugin, 'skills')) }]);
    const [innerRoot] = inner.roots as [Record<string, unknown>];
    expect((innerRoot.namespaceManifests as { path: string }[]).map((m) => m.path)).toEqual([
      pathToFileUri(join(plugin, '.codex-plugin/plugin.json')),
    ]);
  });

  test('a missing root or a file is an error of that root; a bad URI fails the request', async () => {
    const { roots } = await discover([
      { id: 'm', path: pathToFileUri(join(base, 'missing')) },
      { id: 'f', path: pathToFileUri(join(plugin, 'mcp.json')) },
    ]);
    expect(roots.map((r) => [r.id, typeof r.error])).toEqual([
      ['m', 'string'],
      ['f', 'string'],
    ]);
    expect(
      (
        await client.errorOf(
          client.request('capabilityRoots/discoverV1', { roots: [{ id: 'x', path: '/tmp' }] }),
        )
      ).code,
    ).toBe(-32602);
  });

  test('a sandboxed scan is refused per root rather than run unsandboxed', async () => {
    const { roots } = await discover([
      { id: 's', path: pathToFileUri(root), sandbox: { permissions: { type: 'managed' } } },
    ]);
    expect(roots[0]).toMatchObject({ id: 's', skills: [], error: expect.any(String) });
  });
});
