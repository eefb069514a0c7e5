// What the registry would receive: every public package packed with pnpm, checked as the release
// script checks it before publishing (scripts/release.mjs), and the release tooling itself.
import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, test } from 'vitest';
import { manifestProblems, packPublicPackages } from '../scripts/packed-manifests.mjs';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..');

// Packing every package takes a while: once for the tests that read the packs.
let packs: ReturnType<typeof packPublicPackages> | undefined;
const packedPackages = (): ReturnType<typeof packPublicPackages> => {
  packs ??= packPublicPackages();
  return packs;
};

test('every public package packs into a manifest the registry can take', () => {
  const packed = packedPackages();
  expect(packed.map((p) => p.manifest.name).sort()).toEqual([
    '@execd/exec-client',
    '@execd/exec-server',
    '@execd/network-proxy',
    '@execd/protocol',
    '@execd/pty-utils',
    '@execd/sandboxing',
    '@execd/shell-snapshot',
    '@execd/uexec',
    '@execd/unified-exec',
  ]);
  expect(packed.flatMap(manifestProblems)).toEqual([]);
  const protocol = packed.find((p) => p.manifest.name === '@execd/protocol');
  // A user's code validates with the protocol's exported schemas: one valibot instance, shared.
  expect(protocol?.manifest.peerDependencies?.valibot).toMatch(/^\^1\./);
  expect(protocol?.manifest.dependencies?.valibot).toBeUndefined();
  const client = packed.find((p) => p.manifest.name === '@execd/exec-client');
  expect(client?.manifest.dependencies?.['@execd/protocol']).toMatch(/^\^\d/);
  expect(client?.manifest.dependencies?.ws).toMatch(/^\^8\./);
}, 120_000);

test('the library has no MCP SDK: only @execd/uexec depends on it and imports it', async () => {
  const packed = packedPackages();
  const library = packed.find((p) => p.manifest.name === '@execd/unified-exec');
  const cli = packed.find((p) => p.manifest.name === '@execd/uexec');
  if (library === undefined || cli === undefined) throw new Error('unified-exec or uexec not packed');
  for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies'] as const)
    expect(Object.keys(library.manifest[field] ?? {})).not.toContain('@modelcontextprotocol/sdk');
  expect(library.manifest.bin).toBeUndefined();
  const code = library.files.filter((file) => file.startsWith('dist/') && /\.(?:js|d\.ts)$/.test(file));
  expect(code).toContain('dist/index.js');
  const importing: string[] = [];
  for (const file of code)
    if ((await readFile(join(library.dir, file), 'utf8')).includes('@modelcontextprotocol/'))
      importing.push(file);
  expect(importing).toEqual([]);
  expect(cli.manifest.dependencies?.['@modelcontextprotocol/sdk']).toMatch(/^\^\d/);
  expect(cli.manifest.dependencies?.['@execd/unified-exec']).toMatch(/^\^\d/);
  expect(cli.manifest.bin).toEqual({ uexec: './dist/cli/uexec.js' });
  expect(cli.files).toContain('dist/cli/uexec.js');
}, 120_000);

test('the checks catch what must never reach the registry', () => {
  const good = {
    manifest: {
      name: '@execd/x',
      version: '1.0.0',
      description: 'd',
      license: 'Apache-2.0',
      repository: {},
      homepage: 'h',
      bugs: {},
      exports: {},
      engines: {},
      publishConfig: { access: 'public' },
      dependencies: { ws: '^8.0.0', '@execd/protocol': '^0.1.0' },
    },
    files: ['LICENSE', 'README.md', 'package.json'],
    readme: '[abs](https://example.com/docs/a.md)',
  };
  expect(manifestProblems(good)).toEqual([]);
  const bad = {
    manifest: {
      ...good.manifest,
      homepage: undefined,
      publishConfig: undefined,
      dependencies: { ws: '8.23.0', '@execd/protocol': 'workspace:^' },
      peerDependencies: { valibot: 'catalog:' },
    },
    files: ['package.json'],
    readme: 'see [the protocol](../../docs/protocol.md)',
  };
  expect(manifestProblems(bad)).toEqual([
    '@execd/x: no "homepage"',
    '@execd/x: publishConfig.access is not "public"',
    '@execd/x: the tarball has no LICENSE',
    '@execd/x: the tarball has no README.md',
    '@execd/x: dependencies.@execd/protocol is "workspace:^"',
    '@execd/x: peerDependencies.valibot is "catalog:"',
    '@execd/x: dependencies.ws is pinned exactly ("8.23.0"); use a range',
    '@execd/x: README links ../../docs/protocol.md relatively',
  ]);
});

test('changesets runs on this Node and publishes public packages only', async () => {
  const config = JSON.parse(await readFile(join(ROOT, '.changeset', 'config.json'), 'utf8'));
  expect(config.access).toBe('public');
  const { stdout } = await run(join(ROOT, 'node_modules', '.bin', 'changeset'), ['--version'], { cwd: ROOT });
  expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
});

test('every pending changeset has a front matter changesets can read, naming workspace packages', async () => {
  // A formatter once turned `"pkg": patch` + `---` into a Markdown heading: the release lost it.
  const names = new Set<string>();
  for (const dir of await readdir(join(ROOT, 'packages'))) {
    const manifest = JSON.parse(await readFile(join(ROOT, 'packages', dir, 'package.json'), 'utf8'));
    names.add(manifest.name);
  }
  const files = (await readdir(join(ROOT, '.changeset'))).filter(
    (f) => f.endsWith('.md') && f !== 'README.md',
  );
  for (const file of files) {
    const text = await readFile(join(ROOT, '.changeset', file), 'utf8');
    const front = /^---\n([\s\S]*?)\n---\n/.exec(text);
    expect(front, file).not.toBeNull();
    const lines = (front?.[1] ?? '').split('\n').filter((line) => line.trim() !== '');
    expect(lines.length, file).toBeGreaterThan(0);
    for (const line of lines) {
      const release = /^"(@execd\/[a-z-]+)": (patch|minor|major)$/.exec(line);
      expect(release, `${file}: ${line}`).not.toBeNull();
      expect(names.has(release?.[1] ?? ''), `${file}: ${line}`).toBe(true);
    }
    expect(text.slice(front?.[0].length ?? 0).trim().length, file).toBeGreaterThan(0);
  }
});
