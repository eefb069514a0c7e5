import { execFileSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
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
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { findNestedRepositories, GIT_SCAN_MAX_DEPTH, GIT_SCAN_SKIPPED_DIRS } from './git-metadata.ts';
import { clearFolderListings, endFolderScan, scanNestedNames, WORKER_SOURCE } from './nested-scan.ts';

// A listing is reused only for a folder whose change time is over 2 s old when it was listed:
// the tree is made, then left to settle once for the whole file.
let base: string;
beforeAll(async () => {
  await clearFolderListings();
  base = realpathSync(mkdtempSync(join(tmpdir(), 'execd-listings-')));
  for (const dir of ['a/b/c', 'a/d', 'e/f', 'moved-in-src/repo', 'outside/repo/.git', 'quiet/x/y', 'quiet/z'])
    mkdirSync(join(base, 'tree', dir), { recursive: true });
  mkdirSync(join(base, 'elsewhere', 'r', '.git'), { recursive: true });
  await sleep(2_200);
}, 10_000);
afterAll(() => rmSync(base, { recursive: true, force: true }));

const scan = async (): Promise<string[]> =>
  (await findNestedRepositories([join(base, 'tree')], 1_000))[0]!.paths.map((item) => item.path);

/** The worker's own answer for `roots` (what it found, and how many folders it had to read). */
const names = (roots: string[], dirs = 1_000) =>
  scanNestedNames({
    roots,
    dirs,
    maxDepth: GIT_SCAN_MAX_DEPTH,
    skipped: GIT_SCAN_SKIPPED_DIRS,
    watched: ['.git'],
  });

test('an unchanged folder is listed once, then answered from its change time', async () => {
  const root = join(base, 'tree', 'a');
  const first = await names([root]);
  // a, a/b, a/b/c, a/d: each read once.
  expect(first.listed).toBe(4);
  expect(first.roots).toEqual([{ found: [], truncated: false }]);
  // Unchanged: not one folder read again.
  expect((await names([root])).listed).toBe(0);
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

/** The names of this process's threads (`comm`). */
function threadNames(): string[] {
  const names: string[] = [];
  for (const task of readdirSync('/proc/self/task')) {
    try {
      names.push(readFileSync(`/proc/self/task/${task}/comm`, 'utf8').trim());
    } catch {
      // ended while we looked
    }
  }
  return names;
}

/** A tree of `count` folders in rows of 50, never listed before. */
function wideTree(name: string, count: number): string {
  const root = join(base, name);
  for (let i = 0; i < count; i++)
    mkdirSync(join(root, `r${Math.floor(i / 50)}`, `f${i}`), { recursive: true });
  return root;
}

test('the folders are listed off the event loop, by a named worker thread', async () => {
  const root = wideTree('wide', 3_000);
  // A timer of this thread runs while the worker lists 3,000 folders: nothing here waits on them.
  let ticks = 0;
  const scanned = names([root], 10_000).then((scan) => ({ scan, ticksBefore: ticks }));
  const ticker = setInterval(() => ticks++, 0);
  const { scan, ticksBefore } = await scanned;
  clearInterval(ticker);
  expect(scan.listed).toBe(3_000 + 60 + 1);
  expect(ticksBefore).toBeGreaterThan(0);
  expect(threadNames()).toContain('execd-fscan');
});

test('an ended worker takes its listings along, and the next scan starts another', async () => {
  // A sub-tree no other test changes: quiet, x, x/y, z.
  const root = join(base, 'tree', 'quiet');
  await names([root]);
  expect((await names([root])).listed).toBe(0);
  await endFolderScan();
  expect(threadNames()).not.toContain('execd-fscan');
  // A fresh worker: every folder read again, same answer.
  const again = await names([root]);
  expect(again.listed).toBe(4);
  expect(again.roots).toEqual([{ found: [], truncated: false }]);
});

test('a scan whose worker ends under it fails as a spawn failure; the next one runs', async () => {
  const root = wideTree('wide-2', 3_000);
  const outcome = names([root], 10_000).then(
    () => 'answered',
    (error: unknown) => error,
  );
  await endFolderScan();
  expect(await outcome).toMatchObject({ code: 'spawnFailed' });
  expect((await names([join(base, 'tree', 'quiet')])).roots).toEqual([{ found: [], truncated: false }]);
});

test('the budget and the depth bound a scan, shared by its roots in order', async () => {
  const root = wideTree('budget', 120);
  // The root, its 3 rows, then 6 of the 120 folders: the first root stops, the second gets none.
  const scan = await names([root, join(base, 'tree')], 10);
  expect(scan.roots).toEqual([
    { found: [], truncated: true },
    { found: [], truncated: true },
  ]);
  const deep = join(base, 'deep', ...Array.from({ length: GIT_SCAN_MAX_DEPTH + 2 }, (_, i) => `l${i}`));
  mkdirSync(join(deep, '.git'), { recursive: true });
  const shallow = await names([join(base, 'deep')]);
  expect(shallow.roots[0]).toEqual({ found: [], truncated: true });
});

test('a folder with more entries than the budget is walked entry by entry, and says it was cut', async () => {
  const root = join(base, 'crowded');
  mkdirSync(join(root, 'sub', '.git'), { recursive: true });
  for (let i = 0; i < 2_000; i++) writeFileSync(join(root, `file-${i}`), '');
  for (let i = 0; i < 30; i++) mkdirSync(join(root, `dir-${i}`));
  // Files cost nothing but time; 31 sub-folders are more than a budget of 20 can ever visit.
  const cut = await names([root], 20);
  expect(cut.roots[0]!.truncated).toBe(true);
  const whole = await names([root], 1_000);
  expect(whole.roots[0]).toEqual({ found: [join(root, 'sub', '.git')], truncated: false });
  // Every folder read (made just now: none is kept yet), the root whole this time.
  expect(whole.listed).toBe(32);
});

test.each([[[]], [['--input-type=module']]])(
  "the worker's program runs as a script and as a module (execArgv %j)",
  async (execArgv) => {
    // A process started with --input-type=module passes it on to its workers: no `require` there.
    const worker = new Worker(WORKER_SOURCE, { eval: true, execArgv });
    try {
      const reply = new Promise((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      worker.postMessage({
        id: 7,
        roots: [join(base, 'tree', 'quiet')],
        dirs: 100,
        maxDepth: GIT_SCAN_MAX_DEPTH,
        skipped: [],
        watched: ['.git'],
      });
      expect(await reply).toMatchObject({ id: 7, roots: [{ found: [], truncated: false }] });
    } finally {
      await worker.terminate();
    }
  },
);
