// LocalFileSystem on its own (the in-process API): bounded reads, special files, native paths.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExecError } from '@execd/protocol';
import { afterAll, expect, test } from 'vitest';
import { FS_READ_FILE_LIMIT_BYTES, LocalFileSystem } from './local-file-system.ts';

const root = mkdtempSync(join(tmpdir(), 'execd-local-fs-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const fs = new LocalFileSystem();

async function failure(promise: Promise<unknown>): Promise<{ code: string; message: string } | undefined> {
  try {
    await promise;
  } catch (error) {
    if (!ExecError.is(error)) throw error;
    return { code: error.code, message: error.message };
  }
  return undefined;
}

test('files that report size 0 (/proc) are read to their end', async () => {
  const status = new TextDecoder().decode(await fs.readFile('/proc/self/status'));
  expect(status).toContain(`Pid:\t${process.pid}`);
});

test('a 1 GiB file is refused before anything is read; just over the response limit too', async () => {
  const huge = join(root, 'huge');
  writeFileSync(huge, '');
  truncateSync(huge, 1024 * 1024 * 1024);
  expect(await failure(fs.readFile(huge))).toEqual({
    code: 'invalidRequest',
    message: `file is too large to read: limit is ${FS_READ_FILE_LIMIT_BYTES} bytes`,
  });
  // Streaming reads stay available for it, one bounded block at a time.
  await using handle = await fs.open(huge);
  const { chunk, eof } = await handle.read(1024 * 1024 * 1024 - 1, 1024);
  expect([chunk.length, eof]).toEqual([1, true]);
});

test('devices and FIFOs are refused without blocking', async () => {
  const fifo = join(root, 'fifo');
  execFileSync('mkfifo', [fifo]);
  for (const path of ['/dev/zero', fifo]) {
    expect(await failure(fs.readFile(path))).toEqual({
      code: 'invalidRequest',
      message: `path \`${path}\` is not a file`,
    });
    expect((await failure(fs.open(path)))?.code).toBe('invalidRequest');
  }
  expect((await failure(fs.writeFile(fifo, new Uint8Array([1]))))?.code).toBe('invalidRequest');
});

test('paths must be absolute', async () => {
  expect((await failure(fs.readFile('relative/path')))?.code).toBe('invalidParams');
});

test('a watch that is closed settles with closed and stops watching', async () => {
  const watch = await fs.watchMissing([join(root, 'later')]);
  expect(watch.watching).toBe(true);
  await watch.close();
  writeFileSync(join(root, 'later'), '');
  expect(await watch.ended).toBe('closed');
});
