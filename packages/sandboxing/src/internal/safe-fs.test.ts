import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { canonicalDir, readSmallRegularFile } from './safe-fs.ts';

const dir = mkdtempSync(join(tmpdir(), 'execd-safe-fs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('readSmallRegularFile', () => {
  test('reads a file under the limit whole, refuses one at or over it', async () => {
    const file = join(dir, 'small');
    writeFileSync(file, 'gitdir: ../x\n');
    expect(await readSmallRegularFile(file, 4096)).toBe('gitdir: ../x\n');
    writeFileSync(file, 'x'.repeat(100));
    expect(await readSmallRegularFile(file, 101)).toBe('x'.repeat(100));
    expect(await readSmallRegularFile(file, 100)).toBeUndefined();
    expect(await readSmallRegularFile(file, 99)).toBeUndefined();
  });

  test('a file larger than its first buffer is read to the end, bounded by the limit', async () => {
    const file = join(dir, 'large');
    const text = 'a'.repeat(10_000);
    writeFileSync(file, text);
    expect(await readSmallRegularFile(file, 262_144)).toBe(text);
    expect(await readSmallRegularFile(file, 10_000)).toBeUndefined();
  });

  test('missing files, symlinks and folders read as nothing', async () => {
    writeFileSync(join(dir, 'target'), 'secret');
    symlinkSync(join(dir, 'target'), join(dir, 'link'));
    expect(await readSmallRegularFile(join(dir, 'link'), 4096)).toBeUndefined();
    expect(await readSmallRegularFile(join(dir, 'missing'), 4096)).toBeUndefined();
    expect(await readSmallRegularFile(dir, 4096)).toBeUndefined();
  });
});

describe('canonicalDir', () => {
  test('a folder, or a symlink to one, gives the real folder; a file, a link to one or nothing gives undefined', async () => {
    const real = realpathSync(dir);
    mkdirSync(join(dir, 'folder', 'inner'), { recursive: true });
    symlinkSync(join(dir, 'folder', 'inner'), join(dir, 'to-folder'));
    writeFileSync(join(dir, 'plain'), '');
    symlinkSync(join(dir, 'plain'), join(dir, 'to-plain'));
    symlinkSync(join(dir, 'gone'), join(dir, 'dangling'));
    expect(await canonicalDir(join(dir, 'folder'))).toBe(join(real, 'folder'));
    expect(await canonicalDir(join(dir, 'to-folder'))).toBe(join(real, 'folder', 'inner'));
    expect(await canonicalDir(join(dir, 'folder', '..', 'to-folder'))).toBe(join(real, 'folder', 'inner'));
    expect(await canonicalDir('/')).toBe('/');
    for (const name of ['plain', 'to-plain', 'dangling', 'missing'])
      expect(await canonicalDir(join(dir, name))).toBeUndefined();
  });
});
