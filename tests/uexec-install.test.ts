// uexec as a user installs it: every public package packed as the registry would serve it,
// `@execd/uexec` installed with plain npm into a blank project (the @execd dependencies from the
// tarballs, third-party ones from the registry), then its binary run: --version, a command to its
// end with its exit code, a sandboxed command that cannot write outside its workspace.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { packPublicPackages } from '../scripts/packed-manifests.mjs';

const run = promisify(execFile);
/** Packing nine packages and a registry install (node-pty's prebuilt binary, the MCP SDK) take a while. */
const INSTALL_TIMEOUT_MS = 300_000;

let dir: string;
let project: string;
let uexec: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'execd-uexec-install-'));
  const packs = join(dir, 'packs');
  await mkdir(packs);
  const tarballs = packPublicPackages(packs).map((pack) => pack.tarball);
  project = join(dir, 'project');
  await mkdir(project);
  await writeFile(join(project, 'package.json'), '{"name":"blank","version":"1.0.0","private":true}\n');
  await run('npm', ['install', '--no-audit', '--no-fund', ...tarballs], {
    cwd: project,
    timeout: INSTALL_TIMEOUT_MS,
  });
  uexec = join(project, 'node_modules', '.bin', 'uexec');
}, INSTALL_TIMEOUT_MS + 60_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root' };

test('the installed uexec reports its version, and the library carries no MCP SDK of its own', async () => {
  const version = JSON.parse(
    await readFile(join(project, 'node_modules', '@execd', 'uexec', 'package.json'), 'utf8'),
  ).version as string;
  const { stdout } = await run(uexec, ['--version'], { cwd: project, env });
  expect(stdout.trim()).toBe(`uexec ${version}`);
  // The SDK is there for uexec; unified-exec does not name it.
  const library = JSON.parse(
    await readFile(join(project, 'node_modules', '@execd', 'unified-exec', 'package.json'), 'utf8'),
  ) as { dependencies: Record<string, string> };
  expect(Object.keys(library.dependencies)).not.toContain('@modelcontextprotocol/sdk');
  expect(existsSync(join(project, 'node_modules', '@modelcontextprotocol', 'sdk'))).toBe(true);
});

test('uexec run runs a command to its end in a sandboxed workspace and exits with its code', async () => {
  const workspace = join(dir, 'workspace');
  await mkdir(workspace);
  // Outside every writable root (/tmp is one in workspace-write, as the original's): the home folder.
  const away = await mkdtemp(join(homedir(), '.execd-uexec-install-'));
  const outside = join(away, 'outside.txt');
  const script = `echo inside > inside.txt; echo outside > ${outside} || echo refused; exit 3`;
  const result = await run(
    uexec,
    ['run', '--cwd', workspace, '--sandbox', 'workspace-write', '--approval', 'never', script],
    {
      cwd: project,
      env,
    },
  ).then(
    () => ({ code: 0, stdout: '' }),
    (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
  );
  expect(result.code).toBe(3);
  expect(result.stdout).toContain('refused');
  expect(await readFile(join(workspace, 'inside.txt'), 'utf8')).toBe('inside\n');
  expect(existsSync(outside)).toBe(false);
  await rm(away, { recursive: true, force: true });
});
