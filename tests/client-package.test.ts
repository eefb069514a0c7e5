// The client as a user installs it: @execd/protocol and @execd/exec-client packed as the registry
// would serve them, installed with plain npm into a blank project, then used against a real
// execd-server. The install must pull no native module and no server-side package.
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { CliServer } from './helpers/cli-server.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..');
const PNPM = join(ROOT, '.tools', 'node_modules', '.bin', 'pnpm');
/** Packing and a registry install of ws, valibot and msgpack take a few seconds; CI is shared. */
const INSTALL_TIMEOUT_MS = 180_000;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'execd-client-install-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('the packed client installs with plain npm, pulls no native or server package, and runs a command', async () => {
  const tarballs: string[] = [];
  for (const name of ['protocol', 'exec-client']) {
    await run(PNPM, ['pack', '--pack-destination', dir], { cwd: join(ROOT, 'packages', name) });
  }
  for (const file of await readdir(dir)) if (file.endsWith('.tgz')) tarballs.push(join(dir, file));
  expect(tarballs).toHaveLength(2);
  const project = join(dir, 'project');
  await run('mkdir', ['-p', project]);
  await writeFile(join(project, 'package.json'), '{"name":"blank","version":"1.0.0","type":"module"}\n');
  await run('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', ...tarballs], {
    cwd: project,
    timeout: INSTALL_TIMEOUT_MS,
  });
  const { stdout: tree } = await run('npm', ['ls', '--all', '--parseable'], { cwd: project });
  const installed = tree
    .split('\n')
    .filter((line) => line.includes('node_modules'))
    .map((line) => line.slice(line.lastIndexOf('node_modules/') + 'node_modules/'.length));
  expect(installed).toEqual(expect.arrayContaining(['@execd/exec-client', '@execd/protocol', 'ws']));
  for (const forbidden of [
    'node-pty',
    'sandboxing',
    'shell-snapshot',
    'network-proxy',
    'exec-server',
    'prom-client',
  ])
    expect(installed.filter((name) => name.includes(forbidden))).toEqual([]);

  await using server = await CliServer.start();
  const script = `
    import { ExecServerClient } from '@execd/exec-client';
    const client = await ExecServerClient.connect({ url: process.argv[2] });
    const proc = await client.start({ processId: 'p', argv: ['echo', 'installed'], cwd: 'file:///', env: { PATH: '/usr/bin:/bin' }, tty: false, pipeStdin: false });
    let out = '';
    for await (const event of proc.events()) if (event.type === 'output') out += Buffer.from(event.chunk).toString();
    await client.close();
    process.stdout.write(out);
  `;
  await writeFile(join(project, 'use.mjs'), script);
  const { stdout } = await run(process.execPath, ['use.mjs', server.url], { cwd: project, timeout: 60_000 });
  expect(stdout).toBe('installed\n');
});
