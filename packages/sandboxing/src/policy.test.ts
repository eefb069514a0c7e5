import { ExecError, pathToFileUri } from '@execd/protocol';
import { describe, expect, test } from 'vitest';
import { isNetworkDisabled, resolveSandboxPolicy, withManagedNetwork } from './policy.ts';
import { platformSandbox, selectSandbox } from './select.ts';

const CWD = '/work/project';
const NO_TMPDIR = { env: {} };

describe('resolveSandboxPolicy', () => {
  test('workspace-write: cwd, /tmp and $TMPDIR are writable; the network is off', () => {
    const policy = resolveSandboxPolicy({ profile: 'workspace-write' }, CWD, {
      env: { TMPDIR: '/var/tmp/me' },
    });
    expect(policy).toEqual({
      profile: 'workspace-write',
      cwd: CWD,
      fullDiskWrite: false,
      writableRoots: [
        { path: CWD, workspace: true },
        { path: '/tmp', workspace: false },
        { path: '/var/tmp/me', workspace: false },
      ],
      network: 'off',
      deniedPaths: [], // no HOME in this environment: no credential stores to deny
    });
    expect(isNetworkDisabled(policy)).toBe(true);
  });

  test('workspace-write: exclusions, extra roots, explicit workspace roots, duplicates merged', () => {
    const policy = resolveSandboxPolicy(
      {
        profile: 'workspace-write',
        workspaceRoots: [pathToFileUri('/a'), pathToFileUri('/b')],
        writableRoots: [pathToFileUri('/c'), pathToFileUri('/a')],
        excludeSlashTmp: true,
        excludeTmpdirEnvVar: true,
        networkAccess: true,
      },
      CWD,
      { env: { TMPDIR: '/var/tmp/me' } },
    );
    expect(policy.writableRoots).toEqual([
      { path: '/a', workspace: true },
      { path: '/b', workspace: true },
      { path: '/c', workspace: false },
    ]);
    expect(policy.network).toBe('full');
  });

  test('an empty workspaceRoots list means no project root; a relative TMPDIR is ignored', () => {
    const policy = resolveSandboxPolicy({ profile: 'workspace-write', workspaceRoots: [] }, CWD, {
      env: { TMPDIR: 'relative' },
    });
    expect(policy.writableRoots).toEqual([{ path: '/tmp', workspace: false }]);
  });

  test('read-only: nothing writable, network off unless asked for', () => {
    expect(resolveSandboxPolicy({ profile: 'read-only' }, CWD, NO_TMPDIR)).toMatchObject({
      fullDiskWrite: false,
      writableRoots: [],
      network: 'off',
    });
    expect(resolveSandboxPolicy({ profile: 'read-only', networkAccess: true }, CWD).network).toBe('full');
  });

  test('danger-full-access: full write, network on unless turned off; no context is the same', () => {
    expect(resolveSandboxPolicy({ profile: 'danger-full-access' }, CWD)).toMatchObject({
      fullDiskWrite: true,
      writableRoots: [],
      network: 'full',
    });
    expect(resolveSandboxPolicy({ profile: 'danger-full-access', network: 'off' }, CWD).network).toBe('off');
    expect(resolveSandboxPolicy(undefined, CWD).profile).toBe('danger-full-access');
  });

  test('`network` wins over `networkAccess`; proxied counts as disabled', () => {
    const policy = resolveSandboxPolicy(
      { profile: 'workspace-write', networkAccess: true, network: 'proxied' },
      CWD,
    );
    expect(policy.network).toBe('proxied');
    expect(isNetworkDisabled(policy)).toBe(true);
  });

  test('withManagedNetwork (enforceManagedNetwork): a full network becomes proxied, off stays off', () => {
    expect(withManagedNetwork(undefined)).toEqual({ profile: 'danger-full-access', network: 'proxied' });
    expect(withManagedNetwork({ profile: 'danger-full-access' }).network).toBe('proxied');
    expect(withManagedNetwork({ profile: 'danger-full-access', network: 'off' }).network).toBe('off');
    expect(withManagedNetwork({ profile: 'workspace-write' }).network).toBe('off');
    expect(withManagedNetwork({ profile: 'workspace-write', networkAccess: true }).network).toBe('proxied');
    expect(withManagedNetwork({ profile: 'read-only', network: 'full', mode: 'require' })).toEqual({
      profile: 'read-only',
      network: 'proxied',
      mode: 'require',
    });
    expect(withManagedNetwork({ profile: 'workspace-write', network: 'proxied' }).network).toBe('proxied');
  });

  test('bad input is invalidParams', () => {
    const code = (fn: () => unknown) => {
      try {
        fn();
      } catch (error) {
        return ExecError.is(error) ? error.code : 'not an ExecError';
      }
      return 'no error';
    };
    expect(code(() => resolveSandboxPolicy({ profile: 'read-only' }, 'relative'))).toBe('invalidParams');
    expect(
      code(() => resolveSandboxPolicy({ profile: 'workspace-write', writableRoots: ['/native'] }, CWD)),
    ).toBe('invalidParams');
    expect(
      code(() =>
        resolveSandboxPolicy({ profile: 'workspace-write', workspaceRoots: ['file://host/x'] }, CWD),
      ),
    ).toBe('invalidParams');
  });
});

describe('selectSandbox', () => {
  const linux = { platform: 'linux' } as const;
  const full = resolveSandboxPolicy({ profile: 'danger-full-access' }, CWD);
  const fullOffline = resolveSandboxPolicy({ profile: 'danger-full-access', network: 'off' }, CWD);
  const workspace = resolveSandboxPolicy({ profile: 'workspace-write' }, CWD);

  test('forbid is always none', () => {
    expect(selectSandbox(workspace, 'forbid', linux)).toBe('none');
  });

  test('require is the platform sandbox, even for full access', () => {
    expect(selectSandbox(full, 'require', linux)).toBe('linuxSeccomp');
    expect(selectSandbox(full, 'require', { platform: 'darwin' })).toBe('macosSeatbelt');
  });

  test('auto sandboxes only a policy that confines something', () => {
    expect(selectSandbox(workspace, 'auto', linux)).toBe('linuxSeccomp');
    expect(selectSandbox(fullOffline, 'auto', linux)).toBe('linuxSeccomp');
    expect(selectSandbox(full, 'auto', linux)).toBe('none');
    expect(selectSandbox(full, 'auto', { ...linux, managedNetwork: true })).toBe('linuxSeccomp');
    expect(selectSandbox(workspace, undefined, linux)).toBe('linuxSeccomp');
  });

  test('platforms', () => {
    expect(platformSandbox({ platform: 'win32' })).toBe('none');
    expect(platformSandbox({ platform: 'win32', windowsSandbox: true })).toBe('windowsRestrictedToken');
    expect(platformSandbox({ platform: 'freebsd' })).toBe('none');
  });
});
