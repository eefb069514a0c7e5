import { chmod, chown, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import {
  findTrustedExecutable,
  TRUSTED_SYSTEM_DIRS,
  trustedExecutable,
  untrustedReason,
} from './trusted-executable.ts';

const cleanups: string[] = [];
afterEach(async () => {
  for (const dir of cleanups.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** A folder outside every temp folder (under /run, root-owned when the tests run as root). */
async function folder(mode: number, where = '/run'): Promise<string> {
  const dir = await mkdtemp(join(where, 'execd-test-bin-'));
  cleanups.push(dir);
  await chmod(dir, mode);
  return dir;
}

async function tool(dir: string, name: string, mode = 0o755): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, '#!/bin/sh\nexit 0\n');
  await chmod(path, mode);
  return path;
}

describe.skipIf(process.getuid?.() !== 0)('helpers come from trusted folders only', () => {
  test('the real helpers resolve to system folders, whatever PATH says', () => {
    for (const name of ['unshare', 'nsenter', 'sh', 'bash']) {
      const path = trustedExecutable(name);
      expect(path).toBeDefined();
      expect(TRUSTED_SYSTEM_DIRS.some((dir) => path?.startsWith(`${dir}/`))).toBe(true);
    }
  });

  test('a good root-owned folder and file are accepted', async () => {
    const dir = await folder(0o755);
    await tool(dir, 'ip');
    expect(findTrustedExecutable('ip', [dir], [])).toBe(join(dir, 'ip'));
  });

  test('a helper under a temp folder is refused', async () => {
    const dir = await folder(0o755, tmpdir());
    await tool(dir, 'ip');
    expect(findTrustedExecutable('ip', [dir], [])).toBeUndefined();
    expect(untrustedReason(join(dir, 'ip'))).toMatch(/temp/);
  });

  test('a group/world-writable folder or file is refused', async () => {
    const open = await folder(0o777);
    await tool(open, 'ip');
    expect(findTrustedExecutable('ip', [open], [])).toBeUndefined();
    const dir = await folder(0o755);
    await tool(dir, 'ip', 0o775);
    expect(findTrustedExecutable('ip', [dir], [])).toBeUndefined();
  });

  test('a folder or file owned by another user is refused', async () => {
    const foreign = await folder(0o755);
    await tool(foreign, 'ip');
    await chown(foreign, 65534, 65534);
    expect(findTrustedExecutable('ip', [foreign], [])).toBeUndefined();
    const dir = await folder(0o755);
    await chown(await tool(dir, 'ip'), 65534, 65534);
    expect(findTrustedExecutable('ip', [dir], [])).toBeUndefined();
    expect(findTrustedExecutable('ip', [], [await folder(0o755)])).toBeUndefined();
  });

  test('a symlink from a trusted folder into a temp folder is refused', async () => {
    const planted = await folder(0o755, tmpdir());
    const target = await tool(planted, 'ip');
    const dir = await folder(0o755);
    await symlink(target, join(dir, 'ip'));
    expect(findTrustedExecutable('ip', [dir], [])).toBeUndefined();
  });

  test('names with a slash are never resolved', () => {
    expect(findTrustedExecutable('/usr/bin/sh')).toBeUndefined();
    expect(findTrustedExecutable('./sh')).toBeUndefined();
  });
});
