import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { ExecError } from '../errors.ts';
import { decodeParams } from '../methods.ts';
import { decodeSandboxParam, isFileSystemSandboxContext } from './sandbox.ts';

/** The `process/start` params Codex 0.169.0 sent in a captured workspace-write session. */
const CAPTURED_START = JSON.parse(
  readFileSync(
    new URL('../../test/fixtures/codex-0.169-process-start-workspace-write.json', import.meta.url),
    'utf8',
  ),
);

const special = (kind: string, extra: Record<string, unknown> = {}) => ({
  path: { type: 'special', value: { kind, ...extra } },
  access: 'read',
});

function managed(entries: unknown[], extra: Record<string, unknown> = {}) {
  return {
    permissions: { type: 'managed', file_system: { type: 'restricted', entries }, network: 'restricted' },
    ...extra,
  };
}

function invalidParamsMessage(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(ExecError.is(error) && error.code).toBe('invalidParams');
    return (error as Error).message;
  }
  throw new Error('expected invalidParams');
}

describe("the original's sandbox form (FileSystemSandboxContext)", () => {
  test('the captured Codex 0.169.0 process/start decodes, unknown fields dropped', () => {
    const params = decodeParams('process/start', CAPTURED_START);
    const sandbox = params.sandbox;
    expect(sandbox !== undefined && isFileSystemSandboxContext(sandbox)).toBe(true);
    if (sandbox === undefined || !isFileSystemSandboxContext(sandbox)) return;
    expect(sandbox.permissions).toMatchObject({ type: 'managed', network: 'restricted' });
    const fs = sandbox.permissions.type === 'managed' ? sandbox.permissions.file_system : undefined;
    expect(fs?.type).toBe('restricted');
    if (fs?.type !== 'restricted') return;
    expect(fs.entries).toHaveLength(8);
    expect(fs.entries[4]).toEqual({
      path: { type: 'special', value: { kind: 'project_roots', subpath: '.git' } },
      access: 'read',
      missing_path_behavior: 'skip',
    });
    expect(sandbox.workspaceRoots).toEqual([CAPTURED_START.cwd]);
    expect(sandbox.windowsSandboxProxySettingsMode).toBe('reconcile');
  });

  test("fs/writeFile's extra fields: policyContext and userHomeDir", () => {
    const sandbox = decodeSandboxParam(
      managed([special('root')], {
        cwd: 'file:///w',
        policyContext: { cwd: 'file:///w', workspaceRoots: ['file:///w'] },
        userHomeDir: 'file:///root',
        temporaryDirectories: ['file:///tmp/t'],
        someFutureField: { nested: true },
      }),
    );
    expect(sandbox).toMatchObject({
      policyContext: { cwd: 'file:///w', workspaceRoots: ['file:///w'] },
      userHomeDir: 'file:///root',
      temporaryDirectories: ['file:///tmp/t'],
    });
    expect('someFutureField' in sandbox).toBe(false);
  });

  test('every special kind, path type, access and profile type decodes', () => {
    const entries = [
      special('root'),
      special('minimal'),
      special('project_roots'),
      special('project_roots', { subpath: '.git' }),
      special('current_working_directory'),
      special('tmpdir'),
      special('slash_tmp'),
      special('unknown', { path: ':future' }),
      { path: { type: 'path', path: 'file:///etc/x' }, access: 'write' },
      { path: { type: 'glob_pattern', pattern: '**/*.pem' }, access: 'deny' },
      { path: { type: 'path', path: 'file:///etc/y' }, access: 'none' },
    ];
    const sandbox = decodeSandboxParam(managed(entries));
    if (!isFileSystemSandboxContext(sandbox) || sandbox.permissions.type !== 'managed')
      throw new Error('form');
    const fs = sandbox.permissions.file_system;
    if (fs.type !== 'restricted') throw new Error('restricted');
    expect(fs.entries.map((entry) => entry.access)).toEqual([
      ...Array(8).fill('read'),
      'write',
      'deny',
      'deny', // `none` is the legacy alias of `deny`
    ]);
    for (const permissions of [
      { type: 'managed', file_system: { type: 'unrestricted' }, network: 'enabled' },
      {
        type: 'managed',
        file_system: { type: 'restricted', entries: [], glob_scan_max_depth: 2 },
        network: 'restricted',
      },
      { type: 'disabled' },
      { type: 'external', network: 'restricted' },
    ]) {
      expect(decodeSandboxParam({ permissions })).toMatchObject({ permissions });
    }
  });

  test.each([
    [
      'an unknown special kind',
      managed([special('root'), special('root'), special('root'), special('home')]),
      'sandbox.permissions.file_system.entries.3.path.value.kind',
    ],
    [
      'an unknown access',
      managed([{ ...special('root'), access: 'execute' }]),
      'sandbox.permissions.file_system.entries.0.access',
    ],
    [
      'an unknown path type',
      managed([{ path: { type: 'regex' }, access: 'read' }]),
      'sandbox.permissions.file_system.entries.0.path.type',
    ],
    ['an unknown profile type', { permissions: { type: 'sometimes' } }, 'sandbox.permissions.type'],
    [
      'an unknown file-system type',
      { permissions: { type: 'managed', file_system: { type: 'partial' }, network: 'restricted' } },
      'sandbox.permissions.file_system.type',
    ],
    [
      'an unknown network',
      { permissions: { type: 'external', network: 'open' } },
      'sandbox.permissions.network',
    ],
    [
      'an unknown missing_path_behavior',
      managed([{ ...special('root'), missing_path_behavior: 'create' }]),
      'sandbox.permissions.file_system.entries.0.missing_path_behavior',
    ],
  ])('%s is -32602 naming the field', (_name, raw, field) => {
    expect(invalidParamsMessage(() => decodeSandboxParam(raw))).toContain(`\`${field}\``);
  });

  test('inside process/start the message names the field too', () => {
    const raw = { ...CAPTURED_START, sandbox: managed([special('root'), special('home')]) };
    const message = invalidParamsMessage(() => decodeParams('process/start', raw));
    expect(message).toContain('`sandbox.permissions.file_system.entries.1.path.value.kind`');
  });
});

describe("execd's form still decodes, chosen by `profile`", () => {
  test('profile form', () => {
    expect(decodeSandboxParam({ profile: 'workspace-write', network: 'proxied' })).toEqual({
      profile: 'workspace-write',
      network: 'proxied',
    });
  });

  test('a bad profile names `sandbox.profile`; an object with neither key reads as execd form', () => {
    expect(invalidParamsMessage(() => decodeSandboxParam({ profile: 'all' }))).toContain('`sandbox.profile`');
    expect(invalidParamsMessage(() => decodeSandboxParam({}))).toContain('missing field `sandbox.profile`');
  });
});
