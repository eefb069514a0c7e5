import { execFileSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { clearFolderListings, listFolder } from './folder-listings.ts';
import { findNestedRepositories } from './git-metadata.ts';

// A listing is reused only for a folder whose change time is over 2 s old when it was listed:
// the tree is made, then left to settle once for the whole file.
let base: string;
beforeAll(async () => {
  clearFolderListings();
  base = realpathSync(mkdtempSync(join(tmpdir(), 'execd-listings-')));
  for (const dir of ['a/b/c', 'a/d', 'e/f', 'moved-in-src/repo', 'outside/repo/.git'])
    mkdirSync(join(base, 'tree', dir), { recursive: true });
  mkdirSync(join(base, 'elsewhere', 'r', '.git'), { recursive: true });
  await sleep(2_200);
}, 10_000);
afterAll(() => rmSync(base, { recursive: true, force: true }));

const scan = async (): Promise<string[]> =>
  (await findNestedRepositories(join(base, 'tree'), { dirs: 1_000 })).paths.map((item) => item.path);

test('an unchanged folder is listed once, then answered from its change time', async () => {
  const root = join(base, 'tree', 'a');
  const first = await listFolder(root, ['.git']);
  expect(first?.folders.slice().sort()).toEqual(['b', 'd']);
  // The same object: no readdir was needed.
  expect(await listFolder(root, ['.git'])).toBe(first);
});

test('a repository made after the tree was cached is found at the next scan', async () => {
  expect(await scan()).toEqual([join(base, 'tree', 'outside', 'repo', '.git')]);
  mkdirSync(join(base, 'tree', 'a', 'b', 'c', '.git'));
  expect(await scan()).toContain(join(base, 'tree', 'a', 'b', 'c', '.git'));
});

test('restoring the modification time does not hide a new entry (the change time moves anyway)', async () => {
  await scan();
  const parent = join(base, 'tree', 'a', 'd');
  // Keep the folder's exact times on a reference file, add an entry, put the times back.
  const reference = join(base, 'times');
  writeFileSync(reference, '');
  execFileSync('touch', ['-r', parent, reference]);
  mkdirSync(join(parent, '.codex'));
  execFileSync('touch', ['-r', reference, parent]);
  expect(statSync(parent).mtimeMs).toBe(statSync(reference).mtimeMs);
  expect(await scan()).toContain(join(parent, '.codex'));
});

test('a folder renamed into the tree, and one replaced by a symlink, are seen as they are now', async () => {
  await scan();
  renameSync(join(base, 'tree', 'moved-in-src'), join(base, 'tree', 'e', 'f', 'moved'));
  mkdirSync(join(base, 'tree', 'e', 'f', 'moved', 'repo', '.git'));
  expect(await scan()).toContain(join(base, 'tree', 'e', 'f', 'moved', 'repo', '.git'));
  // A cached folder swapped for a symlink: the scan never follows it.
  rmSync(join(base, 'tree', 'outside'), { recursive: true });
  symlinkSync(join(base, 'elsewhere'), join(base, 'tree', 'outside'));
  const found = await scan();
  expect(found).not.toContain(join(base, 'tree', 'outside', 'repo', '.git'));
  expect(found.some((path) => path.startsWith(join(base, 'elsewhere')))).toBe(false);
});
