import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { readSmallRegularFile } from './safe-fs.ts';

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
