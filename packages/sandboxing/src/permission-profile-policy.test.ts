import { decodeSandboxParam, ExecError, pathToFileUri } from '@execd/protocol';
import { describe, expect, test } from 'vitest';
import { originalSandboxFor } from './original-form.ts';
import { LINUX_MINIMAL_READ_ROOTS, resolvePermissionProfile } from './permission-profile-policy.ts';
import { resolveSandboxParam } from './policy.ts';
import { sandboxFromContext } from './prepare.ts';

const WS = '/work/ws';
const HOME = '/home/me';
const special = (kind: string, subpath?: string) => ({
  type: 'special',
  value: subpath === undefined ? { kind } : { kind, subpath },
});

function codex(entries: unknown[], extra: Record<string, unknown> = {}, network = 'restricted') {
  const param = decodeSandboxParam({
    permissions: { type: 'managed', file_system: { type: 'restricted', entries }, network },
    cwd: pathToFileUri(WS),
    workspaceRoots: [pathToFileUri(WS)],
    userHomeDir: pathToFileUri(HOME),
    ...extra,
  });
  if (!('permissions' in param)) throw new Error('form');
  return param;
}

const CREDENTIALS = [
  '.ssh',
  '.aws',
  '.gnupg',
  '.config/gcloud',
  '.netrc',
  '.docker/config.json',
  '.kube/config',
].map((name) => ({ path: `${HOME}/${name}`, skipMissing: true }));

describe('resolvePermissionProfile', () => {
  test("Codex's workspace-write: roots, /tmp, $TMPDIR writable; metadata read-only; credentials denied", () => {
    const policy = resolvePermissionProfile(
      codex([
        { path: special('root'), access: 'read' },
        { path: special('project_roots'), access: 'write' },
        { path: special('slash_tmp'), access: 'write' },
        { path: special('tmpdir'), access: 'write' },
        { path: special('project_roots', '.git'), access: 'read', missing_path_behavior: 'skip' },
      ]),
      '/elsewhere',
      { env: { TMPDIR: '/var/tmp/me' } },
    );
    expect(policy).toEqual({
      profile: 'workspace-write',
      source: 'managed',
      cwd: WS,
      fullDiskWrite: false,
      writableRoots: [
        { path: WS, workspace: true },
        { path: '/tmp', workspace: false },
        { path: '/var/tmp/me', workspace: false },
      ],
      network: 'off',
      readOnlyPaths: [{ path: `${WS}/.git`, skipMissing: true }],
      deniedPaths: CREDENTIALS,
    });
  });

  test('read-only, minimal, deny, none, globs, temporaryDirectories, several roots', () => {
    const policy = resolvePermissionProfile(
      codex(
        [
          { path: special('minimal'), access: 'read' },
          { path: special('current_working_directory'), access: 'write' },
          { path: special('tmpdir'), access: 'write' },
          { path: special('project_roots', 'secrets'), access: 'none' },
          { path: { type: 'path', path: 'file:///opt/data' }, access: 'read' },
          { path: { type: 'glob_pattern', pattern: '**/*.pem' }, access: 'deny' },
          { path: { type: 'glob_pattern', pattern: '/abs/*.txt' }, access: 'read' },
          { path: { type: 'special', value: { kind: 'unknown', path: ':future' } }, access: 'read' },
        ],
        { workspaceRoots: [pathToFileUri('/a'), pathToFileUri('/b')], temporaryDirectories: ['file:///t1'] },
      ),
      '/x',
    );
    expect(policy.writableRoots).toEqual([
      { path: '/a', workspace: true },
      { path: '/b', workspace: true },
      { path: '/t1', workspace: false },
    ]);
    expect(policy.readableRoots).toEqual([...LINUX_MINIMAL_READ_ROOTS, '/a', '/b', '/t1', '/opt/data']);
    expect(policy.deniedPaths?.slice(0, 2)).toEqual([
      { path: '/a/secrets', skipMissing: false },
      { path: '/b/secrets', skipMissing: false },
    ]);
    expect(policy.denyGlobs).toEqual([`${WS}/**/*.pem`]);
  });

  test('the most specific entry wins; on one path deny > write > read', () => {
    const policy = resolvePermissionProfile(
      codex([
        { path: special('root'), access: 'read' },
        { path: { type: 'path', path: 'file:///d' }, access: 'read' },
        { path: { type: 'path', path: 'file:///d' }, access: 'write' },
        { path: { type: 'path', path: 'file:///e' }, access: 'write' },
        { path: { type: 'path', path: 'file:///e' }, access: 'deny' },
      ]),
      '/',
    );
    expect(policy.writableRoots).toEqual([{ path: '/d', workspace: false }]);
    expect(policy.deniedPaths?.[0]).toEqual({ path: '/e', skipMissing: false });
  });

  test('root write alone is full access; unrestricted, disabled and external', () => {
    const full = resolvePermissionProfile(
      codex([{ path: special('root'), access: 'write' }], {}, 'enabled'),
      '/',
    );
    expect(full).toMatchObject({ fullDiskWrite: true, network: 'full', profile: 'danger-full-access' });
    expect(full.deniedPaths).toEqual([]);
    expect(
      sandboxFromContext(codex([{ path: special('root'), access: 'write' }], {}, 'enabled'), '/')?.type,
    ).toBe('none');
    const disabled = decodeSandboxParam({ permissions: { type: 'disabled' } });
    expect(sandboxFromContext(disabled, '/')?.type).toBe('none');
    const external = decodeSandboxParam({ permissions: { type: 'external', network: 'restricted' } });
    expect(resolveSandboxParam(external, '/')).toMatchObject({ source: 'external', network: 'off' });
    expect(sandboxFromContext(external, '/')?.type).toBe('none');
    const unrestricted = decodeSandboxParam({
      permissions: { type: 'managed', file_system: { type: 'unrestricted' }, network: 'restricted' },
    });
    expect(sandboxFromContext(unrestricted, '/', { platform: 'linux' })?.type).toBe('linuxSeccomp');
  });

  test('a path that is not a file URI is invalidParams naming the entry', () => {
    const param = codex([{ path: { type: 'path', path: 'relative/x' }, access: 'read' }]);
    expect(() => resolvePermissionProfile(param, '/')).toThrow(
      expect.objectContaining({
        code: 'invalidParams',
        message: expect.stringContaining('entries[0].path.path'),
      }),
    );
    try {
      resolvePermissionProfile(param, '/');
    } catch (error) {
      expect(ExecError.is(error)).toBe(true);
    }
  });
});

describe('originalSandboxFor (execd client -> original exec-server)', () => {
  test.each([
    [{ profile: 'read-only' as const }],
    [
      {
        profile: 'workspace-write' as const,
        workspaceRoots: [pathToFileUri(WS)],
        writableRoots: ['file:///extra'],
      },
    ],
    [
      {
        profile: 'workspace-write' as const,
        workspaceRoots: [],
        writableRoots: ['file:///only'],
        excludeSlashTmp: true,
        excludeTmpdirEnvVar: true,
      },
    ],
  ])('%j resolves to the same writable roots in both forms', (context) => {
    const options = { env: { TMPDIR: '/var/tmp/me' }, homeDir: HOME };
    const ours = resolveSandboxParam(context, WS, options);
    const original = decodeSandboxParam(originalSandboxFor(context, WS));
    const theirs = resolveSandboxParam(original, WS, options);
    expect(theirs.writableRoots.map((root) => root.path)).toEqual(
      ours.writableRoots.map((root) => root.path),
    );
    expect(theirs.network).toBe(ours.network);
    expect(theirs.fullDiskWrite).toBe(false);
  });

  test('full access is `disabled`; with the network off, an unrestricted managed profile', () => {
    expect(originalSandboxFor({ profile: 'danger-full-access' }, WS).permissions).toEqual({
      type: 'disabled',
    });
    expect(originalSandboxFor({ profile: 'danger-full-access', network: 'off' }, WS).permissions).toEqual({
      type: 'managed',
      file_system: { type: 'unrestricted' },
      network: 'restricted',
    });
  });
});
