import { lstat, mkdir, mkdtemp, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ExecError } from '@execd/protocol';
import { tempDirs } from '@execd/pty-utils';
import { afterEach, describe, expect, test } from 'vitest';
import { startNetworkProxy } from '../src/index.ts';

const isInvalidParams = (error: unknown): boolean => ExecError.is(error) && error.code === 'invalidParams';
const cleanups: string[] = [];
const savedTmpdir = process.env.TMPDIR;

afterEach(async () => {
  if (savedTmpdir === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmpdir;
  for (const path of cleanups.splice(0)) await rm(path, { recursive: true, force: true });
});

describe('where the proxy keeps its sockets', () => {
  test('a private 0700 folder of the executor, outside every temp folder, removed on close', async () => {
    const proxy = await startNetworkProxy();
    const dir = proxy.socketDir;
    expect(dirname(proxy.httpSocketPath)).toBe(dir);
    expect(dirname(proxy.socksSocketPath)).toBe(dir);
    for (const temp of [...(await tempDirs()), tmpdir(), '/tmp']) {
      expect(dir === temp || dir.startsWith(`${temp}/`), `${dir} under ${temp}`).toBe(false);
    }
    const info = await lstat(dir);
    expect(info.isDirectory()).toBe(true);
    expect(info.mode & 0o777).toBe(0o700);
    expect(info.uid).toBe(process.getuid?.());
    if (process.getuid?.() === 0) expect(dirname(dir)).toBe('/run/execd');
    await proxy.close();
    await expect(stat(dir)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  test('an explicit socketDir under a temp folder is refused', async () => {
    await expect(startNetworkProxy({ socketDir: join(tmpdir(), 'execd-sockets') })).rejects.toSatisfy(
      isInvalidParams,
    );
    await expect(startNetworkProxy({ socketDir: '/tmp' })).rejects.toSatisfy(isInvalidParams);
    await expect(startNetworkProxy({ socketDir: '/dev/shm/x' })).rejects.toSatisfy(isInvalidParams);
  });

  test('a symlink that leads into a temp folder is refused too', async () => {
    const inTemp = await mkdtemp(join(tmpdir(), 'execd-sockets-'));
    const link = `/run/execd-test-link-${process.pid}`;
    cleanups.push(inTemp, link);
    await symlink(inTemp, link);
    await expect(startNetworkProxy({ socketDir: link })).rejects.toSatisfy(isInvalidParams);
  });

  test('$TMPDIR counts as a temp folder wherever it points', async () => {
    const custom = await mkdtemp('/run/execd-test-tmpdir-');
    cleanups.push(custom);
    process.env.TMPDIR = custom;
    await expect(startNetworkProxy({ socketDir: join(custom, 'sockets') })).rejects.toSatisfy(
      isInvalidParams,
    );
    // The default folder is unaffected: it never lies under $TMPDIR.
    await using proxy = await startNetworkProxy();
    expect(proxy.socketDir.startsWith(`${custom}/`)).toBe(false);
  });

  test('an explicit private socketDir is used as given', async () => {
    const base = await mkdtemp('/run/execd-test-sockets-');
    cleanups.push(base);
    const socketDir = join(base, 'mine');
    await mkdir(socketDir, { mode: 0o700 });
    await using proxy = await startNetworkProxy({ socketDir });
    expect(proxy.socketDir).toBe(socketDir);
    expect(proxy.httpSocketPath).toBe(join(socketDir, 'http.sock'));
  });
});
