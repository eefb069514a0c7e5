import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeSandboxParam, ExecError, pathToFileUri } from '@execd/protocol';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { sandboxPathAccess } from './path-access.ts';
import { SandboxRootPins } from './root-pins.ts';

let base: string;
let ws: string;
let home: string;
let outside: string;

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'execd-access-')));
  ws = join(base, 'ws');
  home = join(base, 'home');
  outside = join(base, 'outside');
  for (const dir of [ws, home, outside, join(ws, '.git'), join(ws, 'private'), join(home, '.ssh')])
    mkdirSync(dir, { recursive: true });
  writeFileSync(join(ws, 'a.txt'), 'a');
  writeFileSync(join(ws, 'key.pem'), 'k');
  writeFileSync(join(ws, 'private', 'p'), 'p');
  writeFileSync(join(home, '.ssh', 'id'), 'id');
  writeFileSync(join(outside, 'o'), 'o');
  symlinkSync(outside, join(ws, 'link-out'));
  symlinkSync(join(ws, 'private', 'p'), join(ws, 'link-private'));
});

afterEach(() => {
  rmSync(base, { recursive: true, force: true });
});

const special = (kind: string, subpath?: string) => ({
  type: 'special',
  value: subpath === undefined ? { kind } : { kind, subpath },
});

function codex(entries: unknown[]) {
  return decodeSandboxParam({
    permissions: { type: 'managed', file_system: { type: 'restricted', entries }, network: 'restricted' },
    cwd: pathToFileUri(ws),
    workspaceRoots: [pathToFileUri(ws)],
    userHomeDir: pathToFileUri(home),
    temporaryDirectories: [],
  });
}

const options = () => ({ rootPins: new SandboxRootPins(), env: {} });

describe('sandboxPathAccess', () => {
  test('no sandbox, full access, disabled and external confine nothing', () => {
    expect(sandboxPathAccess(undefined)).toBeUndefined();
    expect(sandboxPathAccess({ profile: 'danger-full-access' }, options())).toBeUndefined();
    for (const permissions of [{ type: 'disabled' }, { type: 'external', network: 'restricted' }]) {
      expect(sandboxPathAccess(decodeSandboxParam({ permissions }), options())).toBeUndefined();
    }
  });

  test("the original's workspace-write: the workspace yes; .git, links out, /etc and credential stores no", async () => {
    const access = sandboxPathAccess(
      codex([
        { path: special('root'), access: 'read' },
        { path: special('project_roots'), access: 'write' },
        { path: special('project_roots', '.git'), access: 'read', missing_path_behavior: 'skip' },
        { path: special('project_roots', 'private'), access: 'deny' },
        { path: { type: 'glob_pattern', pattern: '**/*.pem' }, access: 'deny' },
      ]),
      options(),
    );
    if (access === undefined) throw new Error('expected a restriction');
    expect(await access.canWrite(join(ws, 'a.txt'))).toBe(true);
    expect(await access.canWrite(join(ws, 'new', 'deep', 'file'))).toBe(true);
    expect(await access.canRead(join(ws, 'a.txt'))).toBe(true);
    expect(await access.canWrite(join(ws, '.git', 'config'))).toBe(false);
    expect(await access.canRead(join(ws, '.git', 'config'))).toBe(true);
    expect(await access.canWrite(join(ws, '.codex', 'x'))).toBe(false); // protected even when missing
    expect(await access.canWrite(join(ws, 'link-out', 'o'))).toBe(false);
    expect(await access.canRead(join(ws, 'link-out', 'o'))).toBe(true);
    expect(await access.canWrite('/etc/passwd')).toBe(false);
    expect(await access.canRead('/etc/passwd')).toBe(true);
    expect(await access.canRead(join(ws, 'private', 'p'))).toBe(false);
    expect(await access.canRead(join(ws, 'link-private'))).toBe(false); // the link's target is denied
    expect(await access.canWrite(join(ws, 'private', 'new'))).toBe(false);
    expect(await access.canRead(join(ws, 'key.pem'))).toBe(false);
    expect(await access.canRead(join(ws, 'sub', 'other.pem'))).toBe(false);
    expect(await access.canRead(join(home, '.ssh', 'id'))).toBe(false);
    expect(await access.canRead(join(home, '.netrc'))).toBe(false);
    expect(await access.canRead(join(home, 'notes'))).toBe(true);
  });

  test('restricted read: only the readable and writable roots', async () => {
    const access = sandboxPathAccess(
      codex([
        { path: special('minimal'), access: 'read' },
        { path: special('project_roots'), access: 'write' },
      ]),
      options(),
    );
    if (access === undefined) throw new Error('expected a restriction');
    expect(await access.canRead('/usr/bin/env')).toBe(true);
    expect(await access.canRead(join(outside, 'o'))).toBe(false);
    expect(await access.canRead(join(ws, 'link-out', 'o'))).toBe(false);
    expect(await access.canRead(join(ws, 'a.txt'))).toBe(true);
    expect(await access.canWrite('/usr/bin/env')).toBe(false);
  });

  test("execd's forms: read-only and workspace-write, credential stores denied unless named", async () => {
    const readOnly = sandboxPathAccess({ profile: 'read-only' }, { ...options(), homeDir: home });
    expect(await readOnly?.canWrite(join(ws, 'a.txt'))).toBe(false);
    expect(await readOnly?.canRead(join(ws, 'a.txt'))).toBe(true);
    expect(await readOnly?.canRead(join(home, '.ssh', 'id'))).toBe(false);

    const write = sandboxPathAccess(
      { profile: 'workspace-write', workspaceRoots: [pathToFileUri(ws)] },
      { ...options(), homeDir: home },
    );
    expect(await write?.canWrite(join(ws, 'a.txt'))).toBe(true);
    expect(await write?.canWrite(join(ws, '.git', 'HEAD'))).toBe(false);
    expect(await write?.canWrite('/etc/passwd')).toBe(false);
    expect(await write?.canWrite(join(outside, 'o'))).toBe(true); // under /tmp, writable in this profile
    expect(await write?.canRead(join(home, '.ssh', 'id'))).toBe(false);

    const named = sandboxPathAccess(
      {
        profile: 'workspace-write',
        workspaceRoots: [pathToFileUri(ws)],
        writableRoots: [pathToFileUri(join(home, '.ssh'))],
      },
      { ...options(), homeDir: home },
    );
    expect(await named?.canRead(join(home, '.ssh', 'id'))).toBe(true);
    expect(await named?.canRead(join(home, '.netrc'))).toBe(false);
  });

  test('an explicit path entry grants a credential store', async () => {
    const access = sandboxPathAccess(
      codex([
        { path: special('root'), access: 'read' },
        { path: { type: 'path', path: pathToFileUri(join(home, '.ssh')) }, access: 'read' },
      ]),
      options(),
    );
    expect(await access?.canRead(join(home, '.ssh', 'id'))).toBe(true);
    expect(await access?.canRead(join(home, '.aws', 'credentials'))).toBe(false);
  });

  test('a writable root swapped for a symlink after first use is refused', async () => {
    const pins = new SandboxRootPins();
    const param = { profile: 'workspace-write' as const, workspaceRoots: [pathToFileUri(ws)] };
    expect(await sandboxPathAccess(param, { rootPins: pins, env: {} })?.canWrite(join(ws, 'a.txt'))).toBe(
      true,
    );
    rmSync(ws, { recursive: true });
    symlinkSync(outside, ws);
    const again = sandboxPathAccess(param, { rootPins: pins, env: {} });
    await expect(again?.canWrite(join(ws, 'o'))).rejects.toSatisfy(
      (error: unknown) => ExecError.is(error) && error.code === 'invalidParams',
    );
  });
});
