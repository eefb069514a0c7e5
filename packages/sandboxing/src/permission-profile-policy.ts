import { isAbsolute, resolve } from 'node:path';
import {
  ExecError,
  type FileSystemSandboxContext,
  type FileSystemSandboxEntry,
  fileUriToPath,
  type NetworkMode,
} from '@execd/protocol';
import { credentialStoreDenials } from './credential-stores.ts';
import type { PolicyPath, ResolvePolicyOptions, SandboxPolicy, WritableRoot } from './policy.ts';

/**
 * Folders the original's `minimal` special path makes readable on Linux (system programs and
 * libraries, Nix stores): nothing that holds user data.
 */
export const LINUX_MINIMAL_READ_ROOTS: readonly string[] = [
  '/bin',
  '/sbin',
  '/usr',
  '/etc',
  '/lib',
  '/lib64',
  '/nix/store',
  '/run/current-system/sw',
];

type Access = 'read' | 'write' | 'deny';

/** One entry resolved to a concrete absolute path. */
interface Rule {
  readonly path: string;
  readonly access: Access;
  readonly skipMissing: boolean;
  /** From `project_roots` without a subpath: a workspace root (its `.git`/`.codex`/`.agents` protected). */
  readonly workspace: boolean;
  /** Named by an explicit `path` entry (counts as a grant of a credential store). */
  readonly explicit: boolean;
}

const RANK: Record<Access, number> = { read: 0, write: 1, deny: 2 };

function uriPath(uri: string, field: string): string {
  try {
    return fileUriToPath(uri);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ExecError('invalidParams', `sandbox.${field}: ${reason}: ${JSON.stringify(uri)}`, {
      cause: error,
    });
  }
}

function within(root: string, path: string): boolean {
  return root === '/' || path === root || path.startsWith(`${root}/`);
}

/** What special paths and relative patterns resolve against. */
interface Anchors {
  readonly cwd: string;
  readonly projectRoots: readonly string[];
  readonly tmpdirs: readonly string[];
}

function anchorsOf(context: FileSystemSandboxContext, cwd: string, options: ResolvePolicyOptions): Anchors {
  const base = context.cwd ?? context.policyContext?.cwd;
  const anchor = base === undefined ? resolve(cwd) : resolve(uriPath(base, 'cwd'));
  const roots =
    context.workspaceRoots !== undefined && context.workspaceRoots.length > 0
      ? context.workspaceRoots.map((uri, i) => uriPath(uri, `workspaceRoots[${i}]`))
      : (context.policyContext?.workspaceRoots ?? []).map((uri, i) =>
          uriPath(uri, `policyContext.workspaceRoots[${i}]`),
        );
  const envTmp = (options.env ?? process.env).TMPDIR;
  const tmpdirs =
    context.temporaryDirectories?.map((uri, i) => uriPath(uri, `temporaryDirectories[${i}]`)) ??
    (envTmp !== undefined && isAbsolute(envTmp) ? [envTmp] : []);
  return {
    cwd: anchor,
    projectRoots: (roots.length > 0 ? roots : [anchor]).map((root) => resolve(root)),
    tmpdirs: tmpdirs.map((dir) => resolve(dir)),
  };
}

/** The concrete paths of one entry (`minimal` and globs are handled by the caller). */
function entryPaths(entry: FileSystemSandboxEntry, index: number, anchors: Anchors): string[] {
  const target = entry.path;
  if (target.type === 'path')
    return [resolve(uriPath(target.path, `permissions.file_system.entries[${index}].path.path`))];
  if (target.type !== 'special') return [];
  const special = target.value;
  switch (special.kind) {
    case 'root':
      return ['/'];
    case 'project_roots':
    case 'current_working_directory':
      return anchors.projectRoots.map((root) => resolve(root, special.subpath ?? '.'));
    case 'tmpdir':
      return [...anchors.tmpdirs];
    case 'slash_tmp':
      return ['/tmp'];
    default:
      // `minimal` is a set of read roots (below); `unknown` is a newer token the original ignores too.
      return [];
  }
}

/** Merges rules on the same path: `deny` beats `write` beats `read`; a workspace or explicit listing sticks. */
function mergeRules(rules: readonly Rule[]): Rule[] {
  const byPath = new Map<string, Rule>();
  for (const rule of rules) {
    const seen = byPath.get(rule.path);
    if (seen === undefined) {
      byPath.set(rule.path, rule);
      continue;
    }
    const winner = RANK[rule.access] > RANK[seen.access] ? rule : seen;
    byPath.set(rule.path, {
      ...winner,
      skipMissing: seen.skipMissing && rule.skipMissing,
      workspace: seen.workspace || rule.workspace,
      explicit: seen.explicit || rule.explicit,
    });
  }
  return [...byPath.values()];
}

/** The most specific other rule containing `path`, if any. */
function parentRule(rules: readonly Rule[], rule: Rule): Rule | undefined {
  let best: Rule | undefined;
  for (const other of rules) {
    if (other === rule || !within(other.path, rule.path)) continue;
    if (best === undefined || other.path.length > best.path.length) best = other;
  }
  return best;
}

/**
 * Turns the original's `FileSystemSandboxContext` into a {@link SandboxPolicy}, as the original
 * resolves a `PermissionProfile` for its bubblewrap sandbox: special paths against the context's
 * cwd, workspace roots (`project_roots`), temporary directories (`tmpdir`, default `$TMPDIR`) and
 * `/tmp` (`slash_tmp`); the most specific entry wins, `deny` > `write` > `read` on one path.
 * `disabled` and `external` give a full-access policy (no sandbox unless the network or a managed
 * proxy needs one; `external` keeps its network setting). Beyond the original, the executor
 * user's credential stores are denied under a restricted file system unless an explicit `path`
 * entry names them.
 */
export function resolvePermissionProfile(
  context: FileSystemSandboxContext,
  cwd: string,
  options: ResolvePolicyOptions = {},
): SandboxPolicy {
  const anchors = anchorsOf(context, cwd, options);
  // execd's extension (`enforceManagedNetwork` makes it `proxied`) wins over the profile's network.
  const networkOf = (network: 'restricted' | 'enabled'): NetworkMode =>
    context.network ?? (network === 'enabled' ? 'full' : 'off');
  const base = { cwd: anchors.cwd, writableRoots: [] as WritableRoot[] };
  const permissions = context.permissions;
  if (permissions.type === 'disabled') {
    const network = networkOf('enabled');
    return { ...base, profile: 'danger-full-access', fullDiskWrite: true, network, source: 'disabled' };
  }
  if (permissions.type === 'external') {
    const network = networkOf(permissions.network);
    return { ...base, profile: 'danger-full-access', fullDiskWrite: true, network, source: 'external' };
  }
  const network = networkOf(permissions.network);
  const fileSystem = permissions.file_system;
  if (fileSystem.type === 'unrestricted')
    return { ...base, profile: 'danger-full-access', fullDiskWrite: true, network, source: 'managed' };

  const raw: Rule[] = [];
  const denyGlobs: string[] = [];
  let minimal = false;
  fileSystem.entries.forEach((entry, index) => {
    const skipMissing = entry.missing_path_behavior === 'skip';
    if (entry.path.type === 'glob_pattern') {
      // Only deny globs shape a sandbox (the original expands them to masks); read/write globs grant nothing here.
      if (entry.access === 'deny') denyGlobs.push(resolve(anchors.cwd, entry.path.pattern));
      return;
    }
    if (entry.path.type === 'special' && entry.path.value.kind === 'minimal') {
      if (entry.access !== 'deny') minimal = true;
      return;
    }
    const workspace =
      entry.path.type === 'special' &&
      (entry.path.value.kind === 'project_roots' || entry.path.value.kind === 'current_working_directory') &&
      entry.path.value.subpath === undefined;
    for (const path of entryPaths(entry, index, anchors)) {
      raw.push({ path, access: entry.access, skipMissing, workspace, explicit: entry.path.type === 'path' });
    }
  });
  const rules = mergeRules(raw);
  const root = rules.find((rule) => rule.path === '/');
  const fullDiskRead = root !== undefined && root.access !== 'deny';
  const writes = rules.filter((rule) => rule.access === 'write');
  const fullDiskWrite =
    root?.access === 'write' && rules.every((rule) => rule.access === 'write') && denyGlobs.length === 0;

  const writableRoots: WritableRoot[] = writes.map((rule) => ({
    path: rule.path,
    workspace: rule.workspace,
  }));
  // A `read` entry inside a more general `write` entry is a read-only carve-out.
  const readOnlyPaths: PolicyPath[] = rules
    .filter((rule) => rule.access === 'read' && parentRule(rules, rule)?.access === 'write')
    .map(({ path, skipMissing }) => ({ path, skipMissing }));
  const grants = rules.filter((rule) => rule.explicit && rule.access !== 'deny').map((rule) => rule.path);
  const credentials = fullDiskWrite ? [] : credentialStoreDenials(userHome(context, options), grants);
  const deniedPaths: PolicyPath[] = [
    ...rules.filter((rule) => rule.access === 'deny').map(({ path, skipMissing }) => ({ path, skipMissing })),
    ...credentials.filter(
      (store) => !rules.some((rule) => rule.access === 'deny' && within(rule.path, store.path)),
    ),
  ];
  const readableRoots = fullDiskRead
    ? undefined
    : [
        ...(minimal ? LINUX_MINIMAL_READ_ROOTS : []),
        ...rules.filter((rule) => rule.access !== 'deny').map((rule) => rule.path),
      ];
  return {
    ...base,
    profile: fullDiskWrite ? 'danger-full-access' : writes.length > 0 ? 'workspace-write' : 'read-only',
    fullDiskWrite,
    writableRoots: fullDiskWrite ? [] : writableRoots,
    network,
    source: 'managed',
    ...(readableRoots === undefined ? {} : { readableRoots: [...new Set(readableRoots)] }),
    readOnlyPaths,
    deniedPaths,
    ...(denyGlobs.length > 0 ? { denyGlobs } : {}),
    ...(fileSystem.glob_scan_max_depth === undefined
      ? {}
      : { globScanMaxDepth: fileSystem.glob_scan_max_depth }),
  };
}

function userHome(context: FileSystemSandboxContext, options: ResolvePolicyOptions): string | undefined {
  if (context.userHomeDir !== undefined) return resolve(uriPath(context.userHomeDir, 'userHomeDir'));
  return options.homeDir ?? (options.env ?? process.env).HOME;
}
