import { constants } from 'node:fs';
import { resolve } from 'node:path';
import { type DeniedPathPlan, planDeniedPaths, planPolicyPath, planReadableRoots } from './access-plan.ts';
import {
  findNestedRepositories,
  GIT_SCAN_MAX_DIRS,
  type GitMetadataPath,
  repositoryMetadata,
} from './git-metadata.ts';
import { hostSecretsToMask, type MaskedPath } from './host-secrets.ts';
import { access } from './internal/fs-calls.ts';
import { canonicalDir, existingPath, isSpecialFile, pathEntryExists } from './internal/safe-fs.ts';
import { isPlaceholder, settledLook } from './placeholders.ts';
import type { SandboxPolicy } from './policy.ts';
import { DEFAULT_ROOT_PINS, type SandboxRootPins } from './root-pins.ts';

/** Names inside a writable root that stay read-only (spec §5.3). */
export const PROTECTED_NAMES: readonly string[] = ['.git', '.agents', '.codex'];

/**
 * Names protected even when missing in a project root, so that a command cannot create them:
 * `.codex` (as the original), `.git` (a read-only placeholder, as the original: a `.git` created
 * in a sub-folder workspace of a repository would be found by git before the parent's, with a
 * config the command wrote) and `.agents` (instructions an agent trusts). `git init` in a project
 * root therefore fails inside the sandbox; run it outside, or with approval.
 */
export const MASKED_WHEN_MISSING: readonly string[] = ['.git', '.agents', '.codex'];

/** One path that stays read-only inside a writable root. */
export interface ProtectedPath {
  /** Canonical path (symlinks resolved; for a missing path, the root's canonical path plus the name). */
  readonly path: string;
  /**
   * `dir`/`file`: exists and is bound read-only; `missing`: masked so it cannot be created;
   * `special`: a FIFO, socket or device node in a protected name's place, covered by `/dev/null`
   * (never opened; it cannot be replaced by a real `.git` either).
   */
  readonly type: 'dir' | 'file' | 'missing' | 'special';
  /**
   * Found by the scan below the root (a nested repository, another workspace's under `/tmp`):
   * bound only if it still exists when the sandbox starts (it may be another sandbox's
   * placeholder, removed meanwhile).
   */
  readonly nested?: true;
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
  /** Host paths replaced by an empty file or folder inside the sandbox (secrets), after every bind. */
  readonly masked?: readonly MaskedPath[];
  /** True when the nested-repository scan hit {@link GIT_SCAN_MAX_DIRS} before seeing every folder. */
  readonly gitScanTruncated?: boolean;
  /**
   * Restricted read: the only host paths visible (read-only, as configured), besides the writable
   * roots and `/dev`; absent = the whole disk is visible read-only.
   */
  readonly readableRoots?: readonly string[];
  /** Unreadable paths (deny entries, expanded deny globs, credential stores), shallowest first. */
  readonly denied?: readonly DeniedPathPlan[];
}

/** Options of {@link planFileSystem}. */
export interface PlanFileSystemOptions {
  /** The environment's pinned roots (default: this process's {@link DEFAULT_ROOT_PINS}). */
  readonly rootPins?: SandboxRootPins | undefined;
  /** Executor secrets to mask in every sandbox (e.g. its auth token file). */
  readonly hiddenPaths?: readonly string[] | undefined;
  /** Directory visits for the nested-repository scan (default {@link GIT_SCAN_MAX_DIRS}). */
  readonly gitScanMaxDirs?: number | undefined;
}

async function writable(dir: string): Promise<boolean> {
  try {
    await access(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

function within(root: string, path: string): boolean {
  return root === '/' || path === root || path.startsWith(`${root}/`);
}

function depth(path: string): number {
  return path === '/' ? 0 : path.split('/').length - 1;
}

/** The root's own `.git`, `.agents`, `.codex`: existing ones protected, missing ones masked in project roots. */
async function ownProtectedNames(root: string, workspace: boolean): Promise<ProtectedPath[]> {
  const result: ProtectedPath[] = [];
  // Masking needs a mount point created in the root; a root this process cannot write (another
  // owner, a read-only filesystem) cannot get one, nor can the sandboxed command create the name.
  const maskMissing = workspace && (await writable(root));
  // The names are looked at together (each look is independent), kept in their order.
  const looks = await Promise.all(
    PROTECTED_NAMES.map((name) => {
      const path = resolve(root, name);
      const maskable = maskMissing && MASKED_WHEN_MISSING.includes(name);
      return maskable ? settledProtectedName(path, name) : protectedName(path, name, false);
    }),
  );
  for (const look of looks) result.push(...look);
  return result;
}

/**
 * A maskable name as it is once no placeholder of it came or went while the disk was looked at.
 * Another sandbox's placeholder seen as an existing folder would be bound, not masked, without a
 * hold: its owner's removal then detaches that bind, and the next sandbox's fresh placeholder
 * would show through, writable. So a look during which the placeholder changed is repeated.
 */
function settledProtectedName(path: string, name: string): Promise<ProtectedPath[]> {
  return settledLook(
    async () =>
      isPlaceholder(path) ? [{ path, type: 'missing' as const }] : protectedName(path, name, true),
    () => path,
  );
}

/** What protects `path` (the root's `name`), from the disk as it is now. */
async function protectedName(path: string, name: string, maskable: boolean): Promise<ProtectedPath[]> {
  // Nothing at the path itself (the usual `.agents`, `.codex`): one look answers every question.
  if (!(await pathEntryExists(path))) return maskable ? [{ path, type: 'missing' }] : [];
  const found = await repositoryMetadataOrName(path, name);
  if (found.length > 0) return found.map(({ path, kind }) => ({ path, type: kind }));
  if (await isSpecialFile(path)) return [{ path, type: 'special' }];
  // A dangling symlink cannot be masked: a mount would follow the link. See README, limitations.
  if (maskable && !(await pathEntryExists(path))) return [{ path, type: 'missing' }];
  return [];
}

async function repositoryMetadataOrName(path: string, name: string): Promise<GitMetadataPath[]> {
  if (name === '.git') return repositoryMetadata(path);
  const found = await existingPath(path);
  return found === undefined ? [] : [found];
}

/**
 * Inspects the disk for a policy (asynchronously: nothing here blocks the event loop, and no
 * workspace file is opened except as a bounded, non-blocking read of a regular file): canonical
 * writable roots that exist (pinned: a root whose resolution changed since the environment first
 * used it is refused), ordered ancestors first, each with its read-only carve-outs: the root's own
 * `.git` (a directory, or a `gitdir:` file plus the directories it points to and what its config
 * redirects to), `.agents`, `.codex`, placeholders for the missing ones in project roots, and the
 * metadata of every repository nested below; plus the host secrets to mask.
 */
export async function planFileSystem(
  policy: SandboxPolicy,
  options: PlanFileSystemOptions = {},
): Promise<FileSystemPlan> {
  // The host secrets, the readable roots and the denied paths do not depend on the writable
  // roots' scans: they are looked at meanwhile (a launch waits for the slowest, not for the sum).
  const maskedLook = hostSecretsToMask(options.hiddenPaths, policy.fullDiskWrite);
  maskedLook.catch(() => undefined); // awaited below; a refused root must not leave it unhandled
  const cwdLook = canonicalDir(policy.cwd);
  if (policy.fullDiskWrite)
    return {
      fullDiskWrite: true,
      writableRoots: [],
      cwd: (await cwdLook) ?? policy.cwd,
      masked: await maskedLook,
    };
  cwdLook.catch(() => undefined); // awaited below, like the mask
  const pins = options.rootPins ?? DEFAULT_ROOT_PINS;
  // Each configured path is resolved once, all at once (a launch waits for the slowest).
  const configured = [...new Set(policy.writableRoots.map((root) => root.path))];
  const resolved = new Map(
    await Promise.all(configured.map(async (path) => [path, await pins.resolve(path)] as const)),
  );
  const cwd = (await cwdLook) ?? policy.cwd;
  const byPath = new Map<string, boolean>();
  for (const root of policy.writableRoots) {
    const canonical = resolved.get(root.path);
    if (canonical !== undefined) byPath.set(canonical, (byPath.get(canonical) ?? false) || root.workspace);
  }
  const roots = [...byPath.keys()].sort((a, b) => depth(a) - depth(b) || a.localeCompare(b));
  const seen = new Set<string>();
  let gitScanTruncated = false;
  const writableRoots = roots.map((root) => ({ root, readOnly: [] as ProtectedPath[] }));
  const add = (plan: { readonly readOnly: ProtectedPath[] }, item: ProtectedPath): void => {
    // A redirection to a writable root itself (or above one) would freeze the workspace: a
    // command could lock its own roots; such targets are left alone.
    if (item.type === 'dir' && roots.some((other) => within(item.path, other))) return;
    if (seen.has(item.path)) return;
    seen.add(item.path);
    plan.readOnly.push(item);
  };
  // Every root's own names first: a workspace under another writable root (a project in /tmp)
  // keeps its own decision for its `.codex` (a placeholder this sandbox masks and holds) instead
  // of the ancestor's scan finding the folder and binding it as if it were a user's. The disk is
  // looked at for all of it at once; what is found is added in that order. The nested scans
  // share one budget: one request lists every root, root after root.
  const ownLooks = Promise.all(
    writableRoots.map((plan) => ownProtectedNames(plan.root, byPath.get(plan.root) ?? false)),
  );
  const nestedScans = findNestedRepositories(roots, options.gitScanMaxDirs ?? GIT_SCAN_MAX_DIRS);
  const deniedLook = planDeniedPaths(policy, roots);
  const readableLook = planReadableRoots(policy);
  const [own, scans, masked, denied, readableRoots] = await Promise.all([
    ownLooks,
    nestedScans,
    maskedLook,
    deniedLook,
    readableLook,
  ]);
  writableRoots.forEach((plan, i) => {
    for (const item of own[i]!) add(plan, item);
  });
  writableRoots.forEach((plan, i) => {
    const nested = scans[i]!;
    gitScanTruncated ||= nested.truncated;
    for (const { path, kind } of nested.paths) {
      // Another workspace's placeholder (an empty mount point some sandbox of this process made)
      // is masked and held here too: bound as a folder, its owner's removal would detach the bind.
      const type = kind === 'dir' && isPlaceholder(path) ? 'missing' : kind;
      add(plan, { path, type, nested: true });
    }
  });
  await addReadOnlyPaths(policy, roots, writableRoots);
  return {
    fullDiskWrite: false,
    writableRoots,
    cwd,
    masked,
    gitScanTruncated,
    ...(readableRoots === undefined ? {} : { readableRoots }),
    ...(denied.length === 0 ? {} : { denied }),
  };
}

/** The policy's explicit read-only paths, each a carve-out of the deepest writable root holding it. */
async function addReadOnlyPaths(
  policy: SandboxPolicy,
  roots: readonly string[],
  plans: WritableRootPlan[],
): Promise<void> {
  for (const item of policy.readOnlyPaths ?? []) {
    const planned = await planPolicyPath(item, roots);
    if (planned === undefined) continue;
    const owner = [...plans]
      .reverse()
      .find((plan) => plan.root !== planned.path && within(plan.root, planned.path));
    if (owner === undefined || owner.readOnly.some((other) => other.path === planned.path)) continue;
    (owner.readOnly as ProtectedPath[]).push({ path: planned.path, type: planned.kind });
  }
}
