import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { applyVerifiedPatch } from './apply.ts';
import { LocalPatchFileSystem } from './local-patch-fs.ts';
import { parsePatch } from './parser.ts';
import { PatchVerificationError, verifyPatch } from './verify.ts';

let root: string;
let work: string;
let outside: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'apply-patch-fs-'));
  work = join(root, 'work');
  outside = join(root, 'outside');
  for (const dir of [work, outside]) await import('node:fs/promises').then((fs) => fs.mkdir(dir));
});
afterEach(() => rm(root, { recursive: true, force: true }));

const patch = (...lines: string[]) => parsePatch(['*** Begin Patch', ...lines, '*** End Patch'].join('\n'));
const options = { preserveLineEndings: true };

test('a confined file system refuses writes that resolve outside its roots (symlinks followed)', async () => {
  await symlink(outside, join(work, 'link'));
  const fs = new LocalPatchFileSystem([work]);
  await fs.writeFile(join(work, 'in.txt'), new TextEncoder().encode('in'));
  await expect(fs.writeFile(join(work, 'link', 'x.txt'), new Uint8Array())).rejects.toMatchObject({
    code: 'EACCES',
  });
  await expect(fs.createDirectory(join(work, 'link', 'd'), { recursive: true })).rejects.toMatchObject({
    code: 'EACCES',
  });
  await expect(fs.writeFile(join(work, '..', 'outside', 'y.txt'), new Uint8Array())).rejects.toMatchObject({
    code: 'EACCES',
  });
  // Removing the link itself is a write inside the root.
  await fs.remove(join(work, 'link'));
  expect(await readFile(join(work, 'in.txt'), 'utf8')).toBe('in');
});

test('apply: the first failure stops, earlier changes stay, the error names the file', async () => {
  await symlink(outside, join(work, 'link'));
  const verified = await verifyPatch(
    patch(
      '*** Add File: first.txt',
      '+1',
      '*** Add File: link/second.txt',
      '+2',
      '*** Add File: third.txt',
      '+3',
    ),
    work,
    new LocalPatchFileSystem(),
    options,
  );
  const result = await applyVerifiedPatch(verified, new LocalPatchFileSystem([work]));
  expect(result).toMatchObject({ exitCode: 1, output: `Failed to write file ${work}/link/second.txt\n` });
  expect(await readFile(join(work, 'first.txt'), 'utf8')).toBe('1\n');
  await expect(readFile(join(work, 'third.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
  await expect(readFile(join(outside, 'second.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
});

test("binary content is refused with Rust's UTF-8 error; a move overwrites its destination", async () => {
  await writeFile(join(work, 'bin.dat'), Uint8Array.from([0x00, 0x01, 0xff, 0x0a]));
  await expect(
    verifyPatch(
      patch('*** Update File: bin.dat', '@@', '-x', '+y'),
      work,
      new LocalPatchFileSystem(),
      options,
    ),
  ).rejects.toThrow(
    new PatchVerificationError(
      `Failed to read file to update ${work}/bin.dat: invalid utf-8 sequence of 1 bytes from index 2`,
    ),
  );
  await writeFile(join(work, 'a.txt'), 'old\n');
  await writeFile(join(work, 'b.txt'), 'taken\n');
  const verified = await verifyPatch(
    patch('*** Update File: a.txt', '*** Move to: b.txt', '@@', '-old', '+new'),
    work,
    new LocalPatchFileSystem(),
    options,
  );
  expect(await applyVerifiedPatch(verified, new LocalPatchFileSystem([work]))).toEqual({
    exitCode: 0,
    output: 'Success. Updated the following files:\nM b.txt\n',
  });
  expect(await readFile(join(work, 'b.txt'), 'utf8')).toBe('new\n');
  await expect(readFile(join(work, 'a.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
});

test('a large file is patched', async () => {
  const lines = Array.from({ length: 200_000 }, (_, i) => `row ${i}`);
  await writeFile(join(work, 'big.txt'), `${lines.join('\n')}\n`);
  const verified = await verifyPatch(
    patch('*** Update File: big.txt', '@@', ' row 100000', '-row 100001', '+changed'),
    work,
    new LocalPatchFileSystem(),
    options,
  );
  await applyVerifiedPatch(verified, new LocalPatchFileSystem([work]));
  const text = await readFile(join(work, 'big.txt'), 'utf8');
  expect(text.split('\n')[100_001]).toBe('changed');
  expect(text.length).toBe(`${lines.join('\n')}\n`.length - 'row 100001'.length + 'changed'.length);
});
