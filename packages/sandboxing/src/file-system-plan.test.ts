import { execFileSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { planPolicyPath } from './access-plan.ts';
import { planFileSystem } from './file-system-plan.ts';
import { holdPlaceholders } from './placeholders.ts';
import { resolveSandboxPolicy } from './policy.ts';
import { SandboxRootPins } from './root-pins.ts';

let base: string;
beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'execd-plan-')));
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

function workspacePlan(cwd: string, extra: string[] = [], rootPins = new SandboxRootPins()) {
  const policy = resolveSandboxPolicy(
    {
      profile: 'workspace-write',
      writableRoots: extra.map((path) => `file://${path}`),
      excludeSlashTmp: true,
    },
    cwd,
    { env: {} },
  );
  return planFileSystem(policy, { rootPins });
}

test('a workspace root protects .git and masks a missing .codex and .agents', async () => {
  const ws = join(base, 'ws');
  mkdirSync(join(ws, '.git'), { recursive: true });
  const plan = await workspacePlan(ws);
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

test('a missing .git in a project root gets a read-only placeholder (as the original)', async () => {
  const ws = join(base, 'ws');
  mkdirSync(ws);
  const plan = await workspacePlan(ws);
  expect(plan.writableRoots[0]!.readOnly).toContainEqual({ path: join(ws, '.git'), type: 'missing' });
});

test('another root protects only what exists; roots come ancestors first; missing roots are skipped', async () => {
  const ws = join(base, 'outer', 'ws');
  mkdirSync(ws, { recursive: true });
  mkdirSync(join(base, 'outer', '.codex'));
  writeFileSync(join(base, 'outer', '.agents'), '');
  const plan = await workspacePlan(ws, [join(base, 'outer'), join(base, 'missing')]);
  expect(plan.writableRoots.map((r) => r.root)).toEqual([join(base, 'outer'), ws]);
  expect(plan.writableRoots[0]!.readOnly).toEqual([
    { path: join(base, 'outer', '.agents'), type: 'file' },
    { path: join(base, 'outer', '.codex'), type: 'dir' },
  ]);
});

test("a workspace inside another writable root keeps its own placeholders, and other workspaces' are masked", async () => {
  // /outer is writable (like /tmp) and holds this workspace and another one. Another sandbox of
  // this process masks the other workspace's missing .codex, and had masked this one's: the
  // empty folders exist on the host. They must be masked and held here (type missing), never
  // bound as a user's folder that the other sandbox's removal would later detach.
  const ws = join(base, 'outer', 'ws');
  const other = join(base, 'outer', 'other');
  mkdirSync(join(ws, '.codex'), { recursive: true });
  mkdirSync(join(other, '.codex'), { recursive: true });
  const release = holdPlaceholders([join(ws, '.codex'), join(other, '.codex')]);
  try {
    const plan = await workspacePlan(ws, [join(base, 'outer')]);
    const [outer, own] = plan.writableRoots;
    expect(own!.root).toBe(ws);
    expect(own!.readOnly).toContainEqual({ path: join(ws, '.codex'), type: 'missing' });
    expect(outer!.readOnly).toContainEqual({ path: join(other, '.codex'), type: 'missing', nested: true });
    expect(outer!.readOnly.some((item) => item.path === join(ws, '.codex'))).toBe(false);
  } finally {
    await release();
  }
});

test("a denied path's placeholder made by another sandbox stays a placeholder (masked and held)", async () => {
  const ws = join(base, 'ws');
  mkdirSync(join(ws, 'secrets'), { recursive: true });
  const release = holdPlaceholders([join(ws, 'secrets')]);
  try {
    expect(await planPolicyPath({ path: join(ws, 'secrets'), skipMissing: false }, [ws])).toEqual({
      path: join(ws, 'secrets'),
      kind: 'missing',
    });
  } finally {
    await release();
  }
  mkdirSync(join(ws, 'secrets'), { recursive: true }); // a user's folder now: covered as one
  expect(await planPolicyPath({ path: join(ws, 'secrets'), skipMissing: false }, [ws])).toEqual({
    path: join(ws, 'secrets'),
    kind: 'dir',
  });
});

test('a gitdir pointer protects the file, the gitdir and its commondir', async () => {
  const ws = join(base, 'worktree');
  const main = join(base, 'main', '.git');
  const gitdir = join(main, 'worktrees', 'wt');
  mkdirSync(ws, { recursive: true });
  mkdirSync(gitdir, { recursive: true });
  writeFileSync(join(gitdir, 'commondir'), '../..\n');
  writeFileSync(join(ws, '.git'), `gitdir: ${gitdir}\n`);
  const readOnly = (await workspacePlan(ws)).writableRoots[0]!.readOnly;
  expect(readOnly.slice(0, 3)).toEqual([
    { path: join(ws, '.git'), type: 'file' },
    { path: gitdir, type: 'dir' },
    { path: main, type: 'dir' },
  ]);
});

test('a relative gitdir pointer is resolved against the .git file', async () => {
  const ws = join(base, 'sub');
  mkdirSync(join(base, 'modules', 'sub'), { recursive: true });
  mkdirSync(ws);
  writeFileSync(join(ws, '.git'), 'gitdir: ../modules/sub\n');
  expect((await workspacePlan(ws)).writableRoots[0]!.readOnly[1]).toEqual({
    path: join(base, 'modules', 'sub'),
    type: 'dir',
  });
});

test('nested repositories, submodule pointer files and config redirections are protected', async () => {
  const ws = join(base, 'ws');
  mkdirSync(join(ws, '.git'), { recursive: true });
  mkdirSync(join(ws, 'vendor', 'lib', '.git'), { recursive: true });
  mkdirSync(join(ws, '.git', 'modules', 'sm'), { recursive: true });
  mkdirSync(join(ws, 'deps', 'sm'), { recursive: true });
  writeFileSync(join(ws, 'deps', 'sm', '.git'), 'gitdir: ../../.git/modules/sm\n');
  mkdirSync(join(ws, 'hooks'));
  mkdirSync(join(ws, 'packages', 'app', '.codex'), { recursive: true });
  writeFileSync(join(ws, 'shared.gitconfig'), '');
  writeFileSync(
    join(ws, 'vendor', 'lib', '.git', 'config'),
    '[core]\n\thooksPath = ../../hooks\n[include]\n\tpath = "../../../shared.gitconfig"\n',
  );
  const readOnly = (await workspacePlan(ws)).writableRoots[0]!.readOnly;
  expect(readOnly).toEqual(
    expect.arrayContaining([
      { path: join(ws, '.git'), type: 'dir' },
      { path: join(ws, 'vendor', 'lib', '.git'), type: 'dir', nested: true },
      { path: join(ws, 'deps', 'sm', '.git'), type: 'file', nested: true },
      { path: join(ws, 'hooks'), type: 'dir', nested: true },
      { path: join(ws, 'shared.gitconfig'), type: 'file', nested: true },
      { path: join(ws, 'packages', 'app', '.codex'), type: 'dir', nested: true },
    ]),
  );
});

test('a redirection to the workspace itself is not protected (a command cannot freeze its own roots)', async () => {
  const ws = join(base, 'ws');
  mkdirSync(join(ws, 'nested', '.git'), { recursive: true });
  writeFileSync(join(ws, 'nested', '.git', 'config'), '[core]\n\thooksPath = ../..\n');
  const readOnly = (await workspacePlan(ws)).writableRoots[0]!.readOnly;
  expect(readOnly.map((item) => item.path)).not.toContain(ws);
  expect(readOnly).toContainEqual({ path: join(ws, 'nested', '.git'), type: 'dir', nested: true });
});

test('a FIFO or a device behind .git is never opened nor bound, and planning does not block', async () => {
  const ws = join(base, 'ws');
  mkdirSync(join(ws, 'fifo-repo'), { recursive: true });
  execFileSync('mkfifo', [join(ws, '.git')]);
  execFileSync('mkfifo', [join(ws, 'fifo-repo', '.git')]);
  mkdirSync(join(ws, 'dev-repo'));
  symlinkSync('/dev/zero', join(ws, 'dev-repo', '.git'));
  mkdirSync(join(ws, 'common-fifo', '.gitdir'), { recursive: true });
  execFileSync('mkfifo', [join(ws, 'common-fifo', '.gitdir', 'commondir')]);
  writeFileSync(join(ws, 'common-fifo', '.git'), 'gitdir: .gitdir\n');
  const readOnly = (await workspacePlan(ws)).writableRoots[0]!.readOnly;
  const paths = readOnly.map((item) => item.path);
  // A FIFO in a protected name's place is covered (not opened), so it cannot be swapped for a repository.
  expect(readOnly).toContainEqual({ path: join(ws, '.git'), type: 'special' });
  expect(readOnly).toContainEqual({ path: join(ws, 'fifo-repo', '.git'), type: 'special', nested: true });
  expect(paths).not.toContain('/dev/zero');
  expect(paths).toContain(join(ws, 'common-fifo', '.git'));
});

test('the nested-repository scan is bounded and says when it stopped early', async () => {
  const ws = join(base, 'ws');
  for (let i = 0; i < 20; i++) mkdirSync(join(ws, `d${i}`, 'x'), { recursive: true });
  mkdirSync(join(ws, 'd19', 'x', '.git'));
  const policy = resolveSandboxPolicy({ profile: 'workspace-write', excludeSlashTmp: true }, ws, { env: {} });
  const small = await planFileSystem(policy, { rootPins: new SandboxRootPins(), gitScanMaxDirs: 5 });
  expect(small.gitScanTruncated).toBe(true);
  const whole = await planFileSystem(policy, { rootPins: new SandboxRootPins() });
  expect(whole.gitScanTruncated).toBe(false);
  expect(whole.writableRoots[0]!.readOnly).toContainEqual({
    path: join(ws, 'd19', 'x', '.git'),
    type: 'dir',
    nested: true,
  });
});

test('a root pinned at first use is refused once a folder on its path is swapped for a symlink', async () => {
  const jobs = join(base, 'tmp');
  const repo = join(jobs, 'job-1', 'repo');
  mkdirSync(repo, { recursive: true });
  mkdirSync(join(base, 'etc'));
  const pins = new SandboxRootPins();
  expect((await workspacePlan(repo, [], pins)).writableRoots[0]!.root).toBe(repo);
  // What a command with $TMPDIR writable can do: move job-1 away, put a symlinked job-1 in its place.
  renameSync(join(jobs, 'job-1'), join(jobs, 'job-1.old'));
  mkdirSync(join(jobs, 'job-1'));
  symlinkSync(join(base, 'etc'), join(jobs, 'job-1', 'repo'));
  await expect(workspacePlan(repo, [], pins)).rejects.toMatchObject({ code: 'invalidParams' });
  // A fresh environment (new pins) resolves it anew: that is the caller's decision, not the command's.
  expect((await workspacePlan(repo, [], new SandboxRootPins())).writableRoots[0]!.root).toBe(
    join(base, 'etc'),
  );
});

test('symlinked roots and cwd are canonical; a dangling protected symlink is not masked', async () => {
  const real = join(base, 'real');
  mkdirSync(real);
  symlinkSync(real, join(base, 'link'));
  symlinkSync(join(base, 'nowhere'), join(real, '.codex'));
  const plan = await workspacePlan(join(base, 'link'));
  expect(plan.cwd).toBe(real);
  expect(plan.writableRoots).toEqual([
    {
      root: real,
      readOnly: [
        { path: join(real, '.git'), type: 'missing' },
        { path: join(real, '.agents'), type: 'missing' },
      ],
    },
  ]);
});

test('full access and read-only plans', async () => {
  const full = await planFileSystem(resolveSandboxPolicy({ profile: 'danger-full-access' }, base));
  expect(full).toMatchObject({ fullDiskWrite: true, writableRoots: [], cwd: base });
  const readOnly = await planFileSystem(resolveSandboxPolicy({ profile: 'read-only' }, base));
  expect(readOnly.writableRoots).toEqual([]);
});

test('host secrets are masked when running as root; executor secrets always', async () => {
  const token = join(base, 'token');
  writeFileSync(token, 'secret');
  const plan = await planFileSystem(resolveSandboxPolicy({ profile: 'read-only' }, base), {
    hiddenPaths: [token],
  });
  expect(plan.masked).toContainEqual({ path: token, kind: 'file' });
  if (process.getuid?.() === 0) expect(plan.masked).toContainEqual({ path: '/etc/shadow', kind: 'file' });
  const full = await planFileSystem(resolveSandboxPolicy({ profile: 'danger-full-access' }, base), {
    hiddenPaths: [token],
  });
  expect(full.masked).toEqual([{ path: token, kind: 'file' }]);
});
