import { basename, dirname, join, resolve } from 'node:path';
import type { SandboxParam } from '@execd/protocol';
import { matchesDenyGlob } from './deny-globs.ts';
import { PROTECTED_NAMES } from './file-system-plan.ts';
import { realpath } from './internal/fs-calls.ts';
import { type ResolvePolicyOptions, resolveSandboxParam, type SandboxPolicy } from './policy.ts';
import { DEFAULT_ROOT_PINS, type SandboxRootPins } from './root-pins.ts';

/** What a sandboxed command may do with one path: the fs methods' check, as the sandbox would decide. */
export interface SandboxPathAccess {
  /** Resolved (realpath'd where it exists, else the nearest existing parent + rest) absolute path checks. */
  canRead(absolutePath: string): Promise<boolean>;
  canWrite(absolutePath: string): Promise<boolean>;
}

/** Options of {@link sandboxPathAccess}. */
export interface SandboxPathAccessOptions extends ResolvePolicyOptions {
  /** The environment's pinned writable roots (default: this process's `DEFAULT_ROOT_PINS`). */
  readonly rootPins?: SandboxRootPins | undefined;
  /**
   * What relative anchors resolve against when the param names no cwd (execd's form: its default
   * workspace root). Default: this process's cwd.
   */
  readonly cwd?: string | undefined;
}

type Access = 'read' | 'write' | 'deny';

interface CanonicalRule {
  readonly path: string;
  readonly access: Access;
}

/** The canonical form of a path that may not exist: the nearest existing ancestor's realpath + the rest. */
export async function canonicalPath(path: string): Promise<string> {
  const absolute = resolve(path);
  const rest: string[] = [];
  let current = absolute;
  for (;;) {
    try {
      const real = await realpath(current);
      return rest.length === 0 ? real : join(real, ...rest.reverse());
    } catch {
      const parent = dirname(current);
      if (parent === current) return absolute;
      rest.push(basename(current));
      current = parent;
    }
  }
}

function within(root: string, path: string): boolean {
  return root === '/' || path === root || path.startsWith(`${root}/`);
}

const RANK: Record<Access, number> = { read: 0, write: 1, deny: 2 };

/** The rules of a policy, canonicalised (writable roots through the pins, so a swapped root is refused). */
async function canonicalRules(policy: SandboxPolicy, pins: SandboxRootPins): Promise<CanonicalRule[]> {
  const rules: CanonicalRule[] = [];
  if (policy.readableRoots === undefined) rules.push({ path: '/', access: 'read' });
  for (const path of policy.readableRoots ?? [])
    rules.push({ path: await canonicalPath(path), access: 'read' });
  for (const root of policy.writableRoots) {
    const canonical = await pins.resolve(root.path);
    if (canonical === undefined) continue;
    rules.push({ path: canonical, access: 'write' });
    // Existing or not, a root's own metadata names stay read-only (as the sandbox's carve-outs and masks).
    for (const name of PROTECTED_NAMES)
      rules.push({ path: await canonicalPath(join(canonical, name)), access: 'read' });
  }
  for (const item of policy.readOnlyPaths ?? [])
    rules.push({ path: await canonicalPath(item.path), access: 'read' });
  for (const item of policy.deniedPaths ?? []) {
    rules.push({ path: resolve(item.path), access: 'deny' });
    rules.push({ path: await canonicalPath(item.path), access: 'deny' });
  }
  return rules;
}

/** The access of the most specific rule containing `path` (`deny` > `write` > `read` on one path). */
function decide(rules: readonly CanonicalRule[], path: string): Access | undefined {
  let best: CanonicalRule | undefined;
  for (const rule of rules) {
    if (!within(rule.path, path)) continue;
    if (
      best === undefined ||
      rule.path.length > best.path.length ||
      (rule.path.length === best.path.length && RANK[rule.access] > RANK[best.access])
    )
      best = rule;
  }
  return best?.access;
}

/**
 * The path checks of the `fs/*` methods for a `sandbox` param (either wire form): the decision a
 * sandboxed command would get for that path, symlinks resolved first (a link inside the
 * workspace to `/etc` is not writable), deny entries, deny globs, credential stores and read-only
 * carve-outs applied. Undefined when the param confines nothing on the file system (absent,
 * `danger-full-access`, `disabled`, `external`, `unrestricted`): every path is allowed.
 * Throws `invalidParams` for a param that cannot be resolved (e.g. a root that is not a file URI).
 */
export function sandboxPathAccess(
  param: SandboxParam | undefined,
  options: SandboxPathAccessOptions = {},
): SandboxPathAccess | undefined {
  if (param === undefined) return undefined;
  const policy = resolveSandboxParam(param, resolve(options.cwd ?? process.cwd()), options);
  if (policy.fullDiskWrite && (policy.deniedPaths ?? []).length === 0 && policy.denyGlobs === undefined)
    return undefined;
  const pins = options.rootPins ?? DEFAULT_ROOT_PINS;
  let rules: Promise<CanonicalRule[]> | undefined;
  const access = async (path: string): Promise<Access | undefined> => {
    rules ??= canonicalRules(policy, pins);
    const found = await rules;
    const logical = resolve(path);
    const canonical = await canonicalPath(logical);
    const globs = policy.denyGlobs ?? [];
    if (globs.some((glob) => matchesDenyGlob(glob, logical) || matchesDenyGlob(glob, canonical)))
      return 'deny';
    if (decide(found, logical) === 'deny') return 'deny';
    if (policy.fullDiskWrite) return 'write';
    return decide(found, canonical);
  };
  return {
    canRead: async (path) => {
      const result = await access(path);
      return result === 'read' || result === 'write';
    },
    canWrite: async (path) => (await access(path)) === 'write',
  };
}
