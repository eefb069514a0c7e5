import { dirname, resolve } from 'node:path';
import { ExecError } from '@execd/protocol';
import { expandDenyGlobs } from './deny-globs.ts';
import { lstat } from './internal/fs-calls.ts';
import { existingPath, isSpecialFile, pathEntryExists } from './internal/safe-fs.ts';
import { isPlaceholder, settledLook } from './placeholders.ts';
import { DENY_GLOB_MAX_DEPTH, type PolicyPath, type SandboxPolicy } from './policy.ts';

/** One unreadable path as it exists now. */
export interface DeniedPathPlan {
  /** Canonical path (for a missing one: its first missing component, under a writable root). */
  readonly path: string;
  /**
   * `dir`: an empty tmpfs nobody may list (`--perms 000`); `file`: an empty mode-000 file bound
   * over it; `missing`: an empty read-only tmpfs on a mount point made for it, so the path cannot
   * be created (the mount point is removed again when the sandbox ends).
   */
  readonly kind: 'dir' | 'file' | 'missing';
}

function within(root: string, path: string): boolean {
  return root === '/' || path === root || path.startsWith(`${root}/`);
}

/** The first component of `path` that does not exist (undefined when it all exists). */
async function firstMissing(path: string): Promise<string | undefined> {
  const parts = resolve(path).split('/').filter(Boolean);
  let current = '';
  for (const part of parts) {
    current = `${current}/${part}`;
    try {
      await lstat(current);
    } catch {
      return current;
    }
  }
  return undefined;
}

/**
 * A path rule's state on disk: its canonical path and kind, or, when missing and not
 * `skipMissing`, its first missing component if that lies in a writable root (so it can be kept
 * from being created); undefined when there is nothing to do.
 */
export async function planPolicyPath(
  item: PolicyPath,
  writableRoots: readonly string[],
): Promise<DeniedPathPlan | undefined> {
  // Looked at again when another sandbox's placeholder of the planned path came or went meanwhile.
  return settledLook(
    () => lookAtPolicyPath(item, writableRoots),
    (plan) => plan?.path,
  );
}

async function lookAtPolicyPath(
  item: PolicyPath,
  writableRoots: readonly string[],
): Promise<DeniedPathPlan | undefined> {
  // Nothing at all at a path that may be missing (the usual credential store): one look.
  if (item.skipMissing && !(await pathEntryExists(item.path))) return undefined;
  for (let attempt = 1; ; attempt++) {
    const found = await existingPath(item.path);
    // Another sandbox's placeholder for this same missing path is masked and held here too, never
    // covered as an existing folder: its owner's removal would detach that mount.
    if (found !== undefined && isPlaceholder(found.path)) return { path: found.path, kind: 'missing' };
    if (found !== undefined) return { path: found.path, kind: found.kind };
    if (await isSpecialFile(item.path)) return { path: resolve(item.path), kind: 'file' };
    if (item.skipMissing) return undefined;
    const missing = await firstMissing(item.path);
    if (missing !== undefined) {
      const parent = dirname(missing);
      const canonicalParent = (await existingPath(parent))?.path ?? parent;
      const path = resolve(canonicalParent, missing.slice(parent.length + 1));
      return writableRoots.some((root) => within(root, path)) ? { path, kind: 'missing' } : undefined;
    }
    // Every component is there although the path was not a moment ago. A dangling symlink:
    // nothing a mount could cover. Anything else appeared meanwhile (another sandbox's
    // placeholder being made): dropping the rule would leave it unmasked here, so look again.
    if (await isSymlink(item.path)) return undefined;
    if (attempt >= MAX_APPEARING_LOOKS) {
      throw new ExecError('spawnFailed', `the denied path ${item.path} kept changing; try again`);
    }
  }
}

/** Looks at a denied path again at most this often while it appears and vanishes. */
const MAX_APPEARING_LOOKS = 16;

async function isSymlink(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * The unreadable paths of a policy as they exist now: its deny entries (and default credential
 * stores) and what its deny globs match, canonical, without duplicates, shallowest first.
 */
export async function planDeniedPaths(
  policy: SandboxPolicy,
  writableRoots: readonly string[],
): Promise<DeniedPathPlan[]> {
  const items: PolicyPath[] = [...(policy.deniedPaths ?? [])];
  if (policy.denyGlobs !== undefined && policy.denyGlobs.length > 0) {
    const matches = await expandDenyGlobs(policy.denyGlobs, policy.globScanMaxDepth ?? DENY_GLOB_MAX_DEPTH);
    for (const path of matches) items.push({ path, skipMissing: true });
  }
  const byPath = new Map<string, DeniedPathPlan>();
  // Looked at together (each path on its own), kept in the policy's order.
  for (const planned of await Promise.all(items.map((item) => planPolicyPath(item, writableRoots)))) {
    if (planned !== undefined && !byPath.has(planned.path)) byPath.set(planned.path, planned);
  }
  // A path inside another denied folder is already hidden (unless a writable root reopens it).
  const all = [...byPath.values()].sort((a, b) => a.path.length - b.path.length);
  return all.filter(
    (item) =>
      !all.some(
        (other) =>
          other !== item &&
          other.kind === 'dir' &&
          within(other.path, item.path) &&
          !writableRoots.some((root) => within(other.path, root) && within(root, item.path)),
      ),
  );
}

/** The readable roots of a restricted-read policy that exist now (canonical), or undefined for full read. */
export async function planReadableRoots(policy: SandboxPolicy): Promise<string[] | undefined> {
  if (policy.readableRoots === undefined) return undefined;
  const roots = new Set<string>();
  for (const path of policy.readableRoots) {
    if ((await existingPath(path)) !== undefined) roots.add(resolve(path));
  }
  return [...roots];
}
