import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { planFileSystem } from './file-system-plan.ts';
import { resolveSandboxPolicy } from './policy.ts';

let base: string;
beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'execd-plan-')));
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

function workspacePlan(cwd: string, extra: string[] = []) {
  const policy = resolveSandboxPolicy(
    {
      profile: 'workspace-write',
      writableRoots: extra.map((path) => `file://${path}`),
      excludeSlashTmp: true,
    },
    cwd,
    { env: {} },
  );
  return planFileSystem(policy);
}

test('a workspace root protects .git and masks a missing .codex and .agents', () => {
  const ws = join(base, 'ws');
  mkdirSync(join(ws, '.git'), { recursive: true });
  const plan = workspacePlan(ws);
  expect(plan.writableRoots).toEqual([
    {
      root: ws,
      readOnly: [
        { path: join(ws, '.git'), type: 'dir' },
        { path: join(ws, '.agents'), type: 'missing' },
        { path: join(ws, '.codex'), type: 'missing' },
      ],
    },
  ]);
});

test('another root protects only what exists; roots come ancestors first; missing roots are skipped', () => {
  const ws = join(base, 'outer', 'ws');
  mkdirSync(ws, { recursive: true });
  mkdirSync(join(base, 'outer', '.codex'));
  writeFileSync(join(base, 'outer', '.agents'), '');
  const plan = workspacePlan(ws, [join(base, 'outer'), join(base, 'missing')]);
  expect(plan.writableRoots.map((r) => r.root)).toEqual([join(base, 'outer'), ws]);
  expect(plan.writableRoots[0]!.readOnly).toEqual([
    { path: join(base, 'outer', '.agents'), type: 'file' },
    { path: join(base, 'outer', '.codex'), type: 'dir' },
  ]);
});

test('a gitdir pointer protects the file, the gitdir and its commondir', () => {
  const ws = join(base, 'worktree');
  const main = join(base, 'main', '.git');
  const gitdir = join(main, 'worktrees', 'wt');
  mkdirSync(ws, { recursive: true });
  mkdirSync(gitdir, { recursive: true });
  writeFileSync(join(gitdir, 'commondir'), '../..\n');
  writeFileSync(join(ws, '.git'), `gitdir: ${gitdir}\n`);
  const readOnly = workspacePlan(ws).writableRoots[0]!.readOnly;
  expect(readOnly.slice(0, 3)).toEqual([
    { path: join(ws, '.git'), type: 'file' },
    { path: gitdir, type: 'dir' },
    { path: main, type: 'dir' },
  ]);
});

test('a relative gitdir pointer is resolved against the .git file', () => {
  const ws = join(base, 'sub');
  mkdirSync(join(base, 'modules', 'sub'), { recursive: true });
  mkdirSync(ws);
  writeFileSync(join(ws, '.git'), 'gitdir: ../modules/sub\n');
  expect(workspacePlan(ws).writableRoots[0]!.readOnly[1]).toEqual({
    path: join(base, 'modules', 'sub'),
    type: 'dir',
  });
});

test('symlinked roots and cwd are canonical; a dangling protected symlink is not masked', () => {
  const real = join(base, 'real');
  mkdirSync(real);
  symlinkSync(real, join(base, 'link'));
  symlinkSync(join(base, 'nowhere'), join(real, '.codex'));
  const plan = workspacePlan(join(base, 'link'));
  expect(plan.cwd).toBe(real);
  expect(plan.writableRoots).toEqual([
    { root: real, readOnly: [{ path: join(real, '.agents'), type: 'missing' }] },
  ]);
});

test('full access and read-only plans', () => {
  expect(planFileSystem(resolveSandboxPolicy({ profile: 'danger-full-access' }, base))).toEqual({
    fullDiskWrite: true,
    writableRoots: [],
    cwd: base,
  });
  expect(planFileSystem(resolveSandboxPolicy({ profile: 'read-only' }, base)).writableRoots).toEqual([]);
});
