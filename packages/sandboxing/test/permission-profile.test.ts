import { existsSync, lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeSandboxParam, pathToFileUri, type SandboxParam } from '@execd/protocol';
import { waitFor } from '@execd/test-kit';
import { beforeAll, describe, expect, test } from 'vitest';
import { describeSandboxDenial } from '../src/index.ts';
import { deniedFileDir } from '../src/linux/denied-file.ts';
import { requireBwrap, runSandboxed, tempDir } from './helpers/index.ts';

beforeAll(() => {
  requireBwrap();
});

const SECRET = 'top-secret-4711';

const special = (kind: string, subpath?: string) => ({
  type: 'special',
  value: subpath === undefined ? { kind } : { kind, subpath },
});

/** The entries Codex 0.169.0 sends for workspace-write (from a captured session). */
const WORKSPACE_WRITE_ENTRIES = [
  { path: special('root'), access: 'read' },
  { path: special('project_roots'), access: 'write' },
  { path: special('slash_tmp'), access: 'write' },
  { path: special('tmpdir'), access: 'write' },
  ...['.git', '.agents', '.codex', '.aws'].map((name) => ({
    path: special('project_roots', name),
    access: 'read',
    missing_path_behavior: 'skip',
  })),
];

/** The original's `FileSystemSandboxContext`, decoded as the server decodes it. */
function codexSandbox(
  ws: string,
  entries: readonly unknown[],
  extra: Record<string, unknown> = {},
): SandboxParam {
  return decodeSandboxParam({
    permissions: { type: 'managed', file_system: { type: 'restricted', entries }, network: 'restricted' },
    cwd: pathToFileUri(ws),
    workspaceRoots: [pathToFileUri(ws)],
    windowsSandboxLevel: 'disabled',
    windowsSandboxProxySettingsMode: 'reconcile',
    useLegacyLandlock: false,
    ...extra,
  });
}

const unique = () => `execd-${process.pid}-${Math.random().toString(36).slice(2)}`;

describe("the original's workspace-write form under bubblewrap", () => {
  test('the workspace is writable; /etc, .git, .codex and a symlink out of the workspace are not', async () => {
    using ws = tempDir();
    using outside = tempDir('execd-sbx-', '/srv'); // not under /tmp, which this profile makes writable
    mkdirSync(join(ws.path, '.git'));
    writeFileSync(join(ws.path, '.git', 'config'), '[core]\n');
    symlinkSync(outside.path, join(ws.path, 'out'));
    const etc = join('/etc', unique());
    const context = codexSandbox(ws.path, WORKSPACE_WRITE_ENTRIES);
    const run = (script: string) => runSandboxed(script, { cwd: ws.path, context });

    const ok = await run('echo a > f && cat f');
    expect(ok).toMatchObject({ exitCode: 0, stdout: 'a\n', sandboxType: 'linuxSeccomp' });
    expect(readFileSync(join(ws.path, 'f'), 'utf8')).toBe('a\n');

    for (const script of [`touch ${etc}`, 'echo x >> .git/config', 'echo x > out/planted']) {
      const result = await run(script);
      expect(result.exitCode, script).not.toBe(0);
      expect(describeSandboxDenial(result.sandboxType, result), script).toMatchObject({ denied: true });
    }
    for (const script of ['mkdir .codex', 'echo x > .agents/x']) {
      expect((await run(script)).exitCode, script).not.toBe(0);
    }
    expect(existsSync(etc)).toBe(false);
    expect(readFileSync(join(ws.path, '.git', 'config'), 'utf8')).toBe('[core]\n');
    // Only the masks' empty mount points were there, removed once each sandbox is released.
    await waitFor(() => !existsSync(join(ws.path, '.codex')) && !existsSync(join(ws.path, '.agents')));
    expect(existsSync(join(outside.path, 'planted'))).toBe(false);
  });

  test('read-only (root read only): nothing is writable, the workspace included', async () => {
    using ws = tempDir();
    const context = codexSandbox(ws.path, [{ path: special('root'), access: 'read' }]);
    const inTmp = join('/tmp', unique());
    const result = await runSandboxed(`touch f; touch ${inTmp}; ls /etc/hostname`, { cwd: ws.path, context });
    expect(result.stderr).toContain('Read-only file system');
    expect(result.stdout).toContain('/etc/hostname');
    expect(existsSync(join(ws.path, 'f'))).toBe(false);
    expect(existsSync(inTmp)).toBe(false);
  });
});

describe('restricted read', () => {
  test('`minimal` + the workspace: system folders are readable, other host folders are not there', async () => {
    using ws = tempDir();
    using elsewhere = tempDir('execd-sbx-', '/srv');
    writeFileSync(join(elsewhere.path, 'secret'), SECRET);
    writeFileSync(join(ws.path, 'mine'), 'mine\n');
    const context = codexSandbox(ws.path, [
      { path: special('minimal'), access: 'read' },
      { path: special('project_roots'), access: 'write' },
    ]);
    const result = await runSandboxed(
      `cat mine; ls /usr/bin/env; cat ${elsewhere.path}/secret; ls /root; echo w > written`,
      { cwd: ws.path, context },
    );
    expect(result.stdout).toContain('mine\n');
    expect(result.stdout).toContain('/usr/bin/env');
    expect(result.aggregated).not.toContain(SECRET);
    expect(result.stderr).toMatch(/secret: No such file or directory/);
    expect(result.stderr).toMatch(/\/root.*No such file or directory/);
    expect(readFileSync(join(ws.path, 'written'), 'utf8')).toBe('w\n');
  });
});

describe('deny entries and deny globs', () => {
  function setUp(ws: string) {
    writeFileSync(join(ws, 'secret.txt'), SECRET);
    mkdirSync(join(ws, 'private'));
    writeFileSync(join(ws, 'private', 'key'), SECRET);
    mkdirSync(join(ws, 'sub'));
    writeFileSync(join(ws, 'sub', 'cert.pem'), SECRET);
    writeFileSync(join(ws, 'readable.txt'), 'fine\n');
    return codexSandbox(ws, [
      ...WORKSPACE_WRITE_ENTRIES,
      { path: { type: 'path', path: pathToFileUri(join(ws, 'secret.txt')) }, access: 'deny' },
      { path: special('project_roots', 'private'), access: 'none' },
      { path: { type: 'glob_pattern', pattern: '**/*.pem' }, access: 'deny' },
    ]);
  }

  test.each([
    ['cat', 'cat secret.txt private/key sub/cert.pem'],
    ['cp', 'cp secret.txt c1; cp private/key c2; cp sub/cert.pem c3; cat c1 c2 c3'],
    ['tar', 'tar cf out.tar secret.txt private sub; tar xOf out.tar'],
    ['a symlink to it', 'ln -s secret.txt l1; ln -s sub/cert.pem l2; cat l1 l2'],
    ['a hard link', 'ln secret.txt h1; ln sub/cert.pem h2; cat h1 h2'],
    ['listing', 'ls -la private'],
  ])('%s cannot read them', async (_name, script) => {
    using ws = tempDir();
    const context = setUp(ws.path);
    const result = await runSandboxed(`${script}; cat readable.txt`, { cwd: ws.path, context });
    expect(result.stdout).toContain('fine\n');
    expect(result.aggregated).not.toContain(SECRET);
    expect(result.aggregated).toMatch(/Permission denied|Invalid cross-device link/);
    // Checked from outside: nothing the command left behind holds the secret.
    for (const name of ['c1', 'c2', 'c3', 'out.tar', 'h1', 'h2']) {
      const path = join(ws.path, name);
      if (existsSync(path) && lstatSync(path).isFile())
        expect(readFileSync(path, 'utf8')).not.toContain(SECRET);
    }
    expect(readFileSync(join(ws.path, 'secret.txt'), 'utf8')).toBe(SECRET);
  });

  test('a denial is reported with what and where', async () => {
    using ws = tempDir();
    const context = setUp(ws.path);
    const result = await runSandboxed('cat secret.txt', { cwd: ws.path, context });
    expect(result.exitCode).not.toBe(0);
    expect(describeSandboxDenial(result.sandboxType, result)).toEqual({
      denied: true,
      kind: 'read',
      target: 'secret.txt',
    });
  });

  test('deny wins over a read-only folder of the workspace holding the denied files (or being one)', async () => {
    using ws = tempDir();
    mkdirSync(join(ws.path, 'conf', 'keys'), { recursive: true });
    mkdirSync(join(ws.path, 'vault'));
    writeFileSync(join(ws.path, 'conf', 'keys', 'secret.txt'), SECRET);
    writeFileSync(join(ws.path, 'conf', 'server.pem'), SECRET);
    writeFileSync(join(ws.path, 'conf', 'readable.txt'), 'fine\n');
    writeFileSync(join(ws.path, 'vault', 'key'), SECRET);
    const uri = (path: string) => ({ type: 'path', path: pathToFileUri(join(ws.path, path)) });
    const context = codexSandbox(ws.path, [
      ...WORKSPACE_WRITE_ENTRIES,
      { path: uri('conf'), access: 'read' },
      { path: uri('conf/keys/secret.txt'), access: 'deny' },
      { path: { type: 'glob_pattern', pattern: '**/*.pem' }, access: 'deny' },
      { path: uri('vault'), access: 'read' },
      { path: uri('vault'), access: 'none' },
    ]);
    const result = await runSandboxed(
      'cat conf/readable.txt; cat conf/keys/secret.txt conf/server.pem vault/key; ls vault; touch conf/new',
      { cwd: ws.path, context },
    );
    expect(result.stdout).toBe('fine\n');
    expect(result.aggregated).not.toContain(SECRET);
    expect(result.stderr).toMatch(/Permission denied/);
    expect(result.stderr).toMatch(/Read-only file system/);
    expect(existsSync(join(ws.path, 'conf', 'new'))).toBe(false);
  });
});

describe('credential stores of the executor user are unreadable by default', () => {
  function fakeHome(home: string): void {
    mkdirSync(join(home, '.ssh'));
    writeFileSync(join(home, '.ssh', 'id_ed25519'), SECRET);
    writeFileSync(join(home, '.netrc'), SECRET);
    mkdirSync(join(home, '.docker'));
    writeFileSync(join(home, '.docker', 'config.json'), SECRET);
    writeFileSync(join(home, '.docker', 'other.json'), 'fine\n');
  }
  const script = (home: string) =>
    `cat ${home}/.docker/other.json; cat ${home}/.ssh/id_ed25519 ${home}/.netrc ${home}/.docker/config.json`;

  test.each(['read-only', 'workspace-write'] as const)("execd's form, %s", async (profile) => {
    using ws = tempDir();
    using home = tempDir();
    fakeHome(home.path);
    const result = await runSandboxed(script(home.path), {
      cwd: ws.path,
      context: { profile },
      resolve: { env: { HOME: home.path } },
    });
    expect(result.stdout).toBe('fine\n');
    expect(result.aggregated).not.toContain(SECRET);
    expect(describeSandboxDenial(result.sandboxType, result)).toMatchObject({ denied: true, kind: 'read' });
  });

  test.each([
    ['read-only', [{ path: special('root'), access: 'read' }]],
    ['workspace-write', WORKSPACE_WRITE_ENTRIES],
  ])("the original's form, %s (userHomeDir)", async (_name, entries) => {
    using ws = tempDir();
    using home = tempDir();
    fakeHome(home.path);
    const context = codexSandbox(ws.path, entries, { userHomeDir: pathToFileUri(home.path) });
    const result = await runSandboxed(script(home.path), { cwd: ws.path, context });
    expect(result.stdout).toBe('fine\n');
    expect(result.aggregated).not.toContain(SECRET);
  });

  test('an explicit entry for a store makes it readable', async () => {
    using ws = tempDir();
    using home = tempDir();
    fakeHome(home.path);
    const context = codexSandbox(
      ws.path,
      [
        ...WORKSPACE_WRITE_ENTRIES,
        { path: { type: 'path', path: pathToFileUri(join(home.path, '.ssh')) }, access: 'read' },
      ],
      { userHomeDir: pathToFileUri(home.path) },
    );
    const result = await runSandboxed(`cat ${home.path}/.ssh/id_ed25519; cat ${home.path}/.netrc`, {
      cwd: ws.path,
      context,
    });
    expect(result.stdout).toBe(SECRET);
    expect(result.stderr).toMatch(/\.netrc: Permission denied/);
  });

  test('danger-full-access leaves them readable', async () => {
    using ws = tempDir();
    using home = tempDir();
    fakeHome(home.path);
    const result = await runSandboxed(`cat ${home.path}/.netrc`, {
      cwd: ws.path,
      context: { profile: 'danger-full-access', mode: 'require' },
      resolve: { env: { HOME: home.path } },
    });
    expect(result.stdout).toBe(SECRET);
  });
});

test('a missing denied path inside the workspace cannot be created', async () => {
  using ws = tempDir();
  const context = codexSandbox(ws.path, [
    ...WORKSPACE_WRITE_ENTRIES,
    { path: special('project_roots', 'later/secret'), access: 'deny' },
  ]);
  const result = await runSandboxed('mkdir -p later/secret; echo x > later/secret/f; echo done', {
    cwd: ws.path,
    context,
  });
  expect(result.stdout).toBe('done\n');
  expect(existsSync(join(ws.path, 'later', 'secret', 'f'))).toBe(false);
  // The mount point made for the mask is removed again once the sandbox is released.
  await waitFor(() => !existsSync(join(ws.path, 'later')));
});

test.each(['deny', 'read'] as const)(
  'overlapping sandboxes never write through a missing %s path another one is masking',
  async (access) => {
    // Each start may land while another sandbox's placeholder for the missing path is being made
    // or removed: it must still mask it (never drop the rule, never cover it as a user's folder).
    using ws = tempDir();
    const context = codexSandbox(ws.path, [
      ...WORKSPACE_WRITE_ENTRIES,
      { path: special('project_roots', 'secret'), access },
    ]);
    const failures: string[] = [];
    const worker = async (): Promise<void> => {
      for (let round = 0; round < 10; round++) {
        const result = await runSandboxed(
          'mkdir -p secret 2>/dev/null; echo x > secret/f 2>/dev/null && echo WROTE || echo refused',
          { cwd: ws.path, context },
        );
        if (result.exitCode !== 0 || result.stdout !== 'refused\n')
          failures.push(`${result.exitCode}: ${result.stdout}${result.stderr}`);
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    expect(failures).toEqual([]);
    // Checked from the host: nothing was written there, and the last sandbox removed the mount point.
    expect(existsSync(join(ws.path, 'secret', 'f'))).toBe(false);
    await waitFor(() => !existsSync(join(ws.path, 'secret')), { what: 'the placeholder to be removed' });
  },
);

test('a denied folder holding the workspace: the workspace stays usable, its siblings unreadable', async () => {
  using parent = tempDir();
  const ws = join(parent.path, 'ws');
  mkdirSync(ws);
  writeFileSync(join(parent.path, 'sibling.txt'), SECRET);
  writeFileSync(join(ws, 'mine.txt'), 'mine\n');
  const context = codexSandbox(ws, [
    ...WORKSPACE_WRITE_ENTRIES,
    { path: { type: 'path', path: pathToFileUri(parent.path) }, access: 'deny' },
  ]);
  const result = await runSandboxed(
    `cat mine.txt; echo new > new.txt; cat ${parent.path}/sibling.txt; ls ${parent.path}`,
    {
      cwd: ws,
      context,
    },
  );
  expect(result.stdout).toContain('mine\n');
  expect(readFileSync(join(ws, 'new.txt'), 'utf8')).toBe('new\n');
  expect(result.aggregated).not.toContain(SECRET);
  expect(result.stderr).toMatch(/sibling\.txt: (Permission denied|No such file or directory)/);
});

test('the mode-000 source of denied files is out of reach of every later sandbox', async () => {
  using ws = tempDir();
  writeFileSync(join(ws.path, 'secret.txt'), SECRET);
  const deny = codexSandbox(ws.path, [
    ...WORKSPACE_WRITE_ENTRIES,
    { path: { type: 'path', path: pathToFileUri(join(ws.path, 'secret.txt')) }, access: 'deny' },
  ]);
  expect((await runSandboxed('cat secret.txt', { cwd: ws.path, context: deny })).stderr).toMatch(
    /Permission denied/,
  );
  const dir = deniedFileDir();
  if (dir === undefined) throw new Error('the source should exist by now');
  // A plain workspace-write sandbox, /tmp writable: the source's folder is an empty mask there.
  const attack = await runSandboxed(`chmod 644 ${dir}/denied; echo planted > ${dir}/denied; ls -A ${dir}`, {
    cwd: ws.path,
    context: codexSandbox(ws.path, WORKSPACE_WRITE_ENTRIES),
  });
  expect(attack.stdout).toBe('');
  const info = lstatSync(join(dir, 'denied'));
  expect({ size: info.size, mode: info.mode & 0o7777 }).toEqual({ size: 0, mode: 0 });
});
