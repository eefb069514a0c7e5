import {
  accessSync,
  closeSync,
  constants,
  lstatSync,
  openSync,
  readSync,
  realpathSync,
  statSync,
} from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { SandboxPolicy } from './policy.ts';

/** Names inside a writable root that stay read-only (spec §5.3). */
export const PROTECTED_NAMES: readonly string[] = ['.git', '.agents', '.codex'];

/**
 * Names protected even when missing in a project root, so that a command cannot create them.
 * The original does this for `.codex`; execd adds `.agents` (both hold instructions an agent
 * trusts). `.git` stays creatable, as in the original, so `git init` works in a workspace.
 */
export const MASKED_WHEN_MISSING: readonly string[] = ['.agents', '.codex'];

/** A `.git` file holding `gitdir: <path>` is one line; anything longer is not a pointer. */
const GITDIR_FILE_MAX_BYTES = 4096;

/** One path that stays read-only inside a writable root. */
export interface ProtectedPath {
  /** Canonical path (symlinks resolved; for a missing path, the root's canonical path plus the name). */
  readonly path: string;
  /** `dir`/`file`: exists and is bound read-only; `missing`: masked so it cannot be created. */
  readonly type: 'dir' | 'file' | 'missing';
}

/** A writable root as it exists right now, with its read-only carve-outs. */
export interface WritableRootPlan {
  /** Canonical path of an existing directory. */
  readonly root: string;
  readonly readOnly: readonly ProtectedPath[];
}

/** What the filesystem of a sandbox looks like, computed from a policy and the disk as it is now. */
export interface FileSystemPlan {
  /** Every path writable (`danger-full-access`); `writableRoots` is then empty. */
  readonly fullDiskWrite: boolean;
  /** Existing writable roots, ancestors before descendants (so a later bind never hides an earlier carve-out). */
  readonly writableRoots: readonly WritableRootPlan[];
  /** Canonical cwd (the command's working directory inside the sandbox). */
  readonly cwd: string;
}

function canonicalDir(path: string): string | undefined {
  try {
    return statSync(path).isDirectory() ? realpathSync(path) : undefined;
  } catch {
    return undefined;
  }
}

function existing(path: string): ProtectedPath | undefined {
  try {
    const info = statSync(path);
    return { path: realpathSync(path), type: info.isDirectory() ? 'dir' : 'file' };
  } catch {
    return undefined;
  }
}

function readSmallFile(path: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const buffer = Buffer.alloc(GITDIR_FILE_MAX_BYTES);
    const length = readSync(fd, buffer, 0, buffer.length, 0);
    return length === buffer.length ? undefined : buffer.toString('utf8', 0, length);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Follows `.git` as a `gitdir:` pointer file (worktrees, submodules) to the git directories it names. */
function gitPointerTargets(gitFile: string): ProtectedPath[] {
  const match = /^gitdir:\s*(.+?)\s*$/m.exec(readSmallFile(gitFile) ?? '');
  if (match?.[1] === undefined) return [];
  const gitdir = existing(resolve(dirname(gitFile), match[1]));
  if (gitdir?.type !== 'dir') return [];
  // A worktree's gitdir names the shared repository (config, hooks) in `commondir`; protect it too.
  const common = readSmallFile(resolve(gitdir.path, 'commondir'))?.trim();
  const commonDir = common ? existing(isAbsolute(common) ? common : resolve(gitdir.path, common)) : undefined;
  return commonDir?.type === 'dir' ? [gitdir, commonDir] : [gitdir];
}

function writable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

function protectedPaths(root: string, workspace: boolean): ProtectedPath[] {
  const result: ProtectedPath[] = [];
  // Masking needs a mount point created in the root; a root this process cannot write (another
  // owner, a read-only filesystem) cannot get one, nor can the sandboxed command create the name.
  const maskMissing = workspace && writable(root);
  for (const name of PROTECTED_NAMES) {
    const path = resolve(root, name);
    const found = existing(path);
    if (found !== undefined) {
      result.push(found);
      if (name === '.git' && found.type === 'file') result.push(...gitPointerTargets(path));
      continue;
    }
    let dangling = false;
    try {
      dangling = lstatSync(path).isSymbolicLink();
    } catch {}
    // A dangling symlink cannot be masked (a mount would follow it); see README, limitations.
    if (!dangling && maskMissing && MASKED_WHEN_MISSING.includes(name))
      result.push({ path, type: 'missing' });
  }
  return result;
}

/**
 * Inspects the disk for a policy: canonical writable roots that exist (missing ones are skipped,
 * symlinks resolved), ordered ancestors first, each with its read-only carve-outs: `.git` (a
 * directory, or a `gitdir:` file plus the directories it points to), `.agents`, `.codex`.
 */
export function planFileSystem(policy: SandboxPolicy): FileSystemPlan {
  const cwd = canonicalDir(policy.cwd) ?? policy.cwd;
  if (policy.fullDiskWrite) return { fullDiskWrite: true, writableRoots: [], cwd };
  const byPath = new Map<string, boolean>();
  for (const root of policy.writableRoots) {
    const canonical = canonicalDir(root.path);
    if (canonical !== undefined) byPath.set(canonical, (byPath.get(canonical) ?? false) || root.workspace);
  }
  const roots = [...byPath.keys()].sort((a, b) => depth(a) - depth(b) || a.localeCompare(b));
  const writableRoots = roots.map((root) => ({
    root,
    readOnly: protectedPaths(root, byPath.get(root) ?? false),
  }));
  return { fullDiskWrite: false, writableRoots, cwd };
}

function depth(path: string): number {
  return path === '/' ? 0 : path.split('/').length - 1;
}
