import { isAbsolute, resolve } from 'node:path';
import {
  ExecError,
  fileUriToPath,
  isFileSystemSandboxContext,
  type NetworkMode,
  type PermissionProfileName,
  type SandboxContext,
  type SandboxParam,
} from '@execd/protocol';
import { credentialStoreDenials } from './credential-stores.ts';
import { resolvePermissionProfile } from './permission-profile-policy.ts';

/** A directory a sandboxed command may write, before canonicalisation. */
export interface WritableRoot {
  /** Absolute path as configured (symlinks are resolved when the sandbox is built). */
  readonly path: string;
  /**
   * A project root (the cwd or a `workspaceRoots` entry): its `.codex` and `.agents` are
   * protected even when missing, so a command cannot create them.
   */
  readonly workspace: boolean;
}

/**
 * A permission profile resolved against a cwd and an environment: what a sandboxed command may
 * write and reach. Pure data; the sandbox builders inspect the filesystem when they run.
 */
export interface SandboxPolicy {
  /** The wire profile this policy came from. */
  readonly profile: PermissionProfileName;
  /** True for `danger-full-access`: every path is writable and nothing is protected. */
  readonly fullDiskWrite: boolean;
  /** Writable directories (`workspace-write` only), in configuration order, without duplicates. */
  readonly writableRoots: readonly WritableRoot[];
  /**
   * `full`, `off`, or `proxied`: only through a managed network proxy (see `spawnProcess`'s
   * `managedNetwork`); without one, `proxied` is enforced as `off`.
   */
  readonly network: NetworkMode;
  /** The absolute working directory the policy was resolved against. */
  readonly cwd: string;
  /**
   * Restricted read (the original's form without a `root` read entry): only these absolute paths
   * (and the writable roots) are visible; absent = the whole disk is readable.
   */
  readonly readableRoots?: readonly string[];
  /** Explicit read-only entries (the original's `read` entries under a writable entry). */
  readonly readOnlyPaths?: readonly PolicyPath[];
  /** Unreadable paths: the original's `deny` entries and the default credential stores. */
  readonly deniedPaths?: readonly PolicyPath[];
  /** Absolute deny-read glob patterns (expanded at launch, see `glob_scan_max_depth`). */
  readonly denyGlobs?: readonly string[];
  /** How deep a deny glob is expanded below its fixed prefix (default {@link DENY_GLOB_MAX_DEPTH}). */
  readonly globScanMaxDepth?: number;
  /**
   * Where the policy came from: `managed` (the original's form), `disabled` / `external` (no
   * sandbox unless the network needs one). Absent = execd's form.
   */
  readonly source?: 'managed' | 'disabled' | 'external';
}

/** A path rule of a policy beyond writable roots. */
export interface PolicyPath {
  /** Absolute path, as configured (resolved against the filesystem when the sandbox is built). */
  readonly path: string;
  /** The original's `missing_path_behavior: skip`: a missing path is ignored (else it is kept from being created). */
  readonly skipMissing: boolean;
}

/** Default depth of a deny glob's expansion when the policy gives no `glob_scan_max_depth`. */
export const DENY_GLOB_MAX_DEPTH = 8;

/** Options of {@link resolveSandboxPolicy}. */
export interface ResolvePolicyOptions {
  /** Source of `TMPDIR` (the executor's environment, as the original). Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * The executor user's home, whose credential stores are denied (default: `HOME` of `env`).
   * The original's form may name it (`userHomeDir`), which wins.
   */
  readonly homeDir?: string | undefined;
}

/** The `workspace-write` temp directory that is writable unless `excludeSlashTmp` (unix). */
export const SLASH_TMP = '/tmp';

/**
 * True when the policy keeps the command off the direct network (`off` or `proxied`). A `proxied`
 * command reaches the network only through its managed proxy, or not at all without one.
 */
export function isNetworkDisabled(policy: SandboxPolicy): boolean {
  return policy.network !== 'full';
}

function rootPath(uri: string, field: string): string {
  try {
    return fileUriToPath(uri);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ExecError('invalidParams', `sandbox.${field}: ${reason}: ${JSON.stringify(uri)}`, {
      cause: error,
    });
  }
}

function networkOf(context: SandboxContext | undefined, fallback: NetworkMode): NetworkMode {
  if (context?.network !== undefined) return context.network;
  if (context?.networkAccess !== undefined) return context.networkAccess ? 'full' : 'off';
  return fallback;
}

/**
 * The sandbox context of a command whose network must go through the managed proxy
 * (`ExecParams.enforceManagedNetwork`): a network that would be `full` (the `network` field,
 * `networkAccess`, or the profile's default) becomes `proxied`; `off` stays off (stricter).
 * No context means `danger-full-access` with a proxied network.
 */
export function withManagedNetwork(context: SandboxParam | undefined): SandboxParam {
  if (context !== undefined && isFileSystemSandboxContext(context)) {
    const permissions = context.permissions;
    const network =
      context.network ??
      (permissions.type === 'disabled' || ('network' in permissions && permissions.network === 'enabled')
        ? 'full'
        : 'off');
    return { ...context, network: network === 'full' ? 'proxied' : network };
  }
  const base: SandboxContext = context ?? { profile: 'danger-full-access' };
  const network = networkOf(base, base.profile === 'danger-full-access' ? 'full' : 'off');
  return { ...base, network: network === 'full' ? 'proxied' : network };
}

/**
 * Turns the wire `ExecParams.sandbox` (plus the command's cwd) into a {@link SandboxPolicy},
 * as the original's legacy `SandboxPolicy` → file-system policy mapping (spec §5.3):
 * - `read-only`: nothing writable; network off unless asked for;
 * - `workspace-write`: the workspace roots (default: cwd), `writableRoots`, `/tmp` (unless
 *   `excludeSlashTmp`) and `$TMPDIR` (when set and absolute, unless `excludeTmpdirEnvVar`);
 *   network off unless asked for;
 * - `danger-full-access`: everything writable; network on unless `network`/`networkAccess` say off.
 * An absent context means `danger-full-access` with no sandbox preference.
 * Throws `invalidParams` for a cwd that is not absolute or a root that is not a `file://` URI.
 */
export function resolveSandboxPolicy(
  context: SandboxContext | undefined,
  cwd: string,
  options: ResolvePolicyOptions = {},
): SandboxPolicy {
  if (!isAbsolute(cwd))
    throw new ExecError('invalidParams', `sandbox cwd must be absolute: ${JSON.stringify(cwd)}`);
  const profile = context?.profile ?? 'danger-full-access';
  const base = { profile, cwd: resolve(cwd) };
  if (profile === 'danger-full-access') {
    return { ...base, fullDiskWrite: true, writableRoots: [], network: networkOf(context, 'full') };
  }
  const env = options.env ?? process.env;
  const home = options.homeDir ?? env.HOME;
  if (profile === 'read-only') {
    const deniedPaths = credentialStoreDenials(home, []);
    return {
      ...base,
      fullDiskWrite: false,
      writableRoots: [],
      network: networkOf(context, 'off'),
      deniedPaths,
    };
  }
  const roots: WritableRoot[] = [];
  const add = (path: string, workspace: boolean): void => {
    const normal = resolve(path);
    const existing = roots.findIndex((root) => root.path === normal);
    if (existing >= 0) {
      // A path listed twice is a workspace root if either listing says so.
      if (workspace && !roots[existing]!.workspace) roots[existing] = { path: normal, workspace };
      return;
    }
    roots.push({ path: normal, workspace });
  };
  const workspaceRoots = context?.workspaceRoots?.map((uri) => rootPath(uri, 'workspaceRoots')) ?? [base.cwd];
  for (const path of workspaceRoots) add(path, true);
  for (const uri of context?.writableRoots ?? []) add(rootPath(uri, 'writableRoots'), false);
  if (context?.excludeSlashTmp !== true) add(SLASH_TMP, false);
  const tmpdir = env.TMPDIR;
  if (context?.excludeTmpdirEnvVar !== true && tmpdir !== undefined && isAbsolute(tmpdir)) add(tmpdir, false);
  // Only roots named on the wire are grants of a store; /tmp and $TMPDIR are not.
  const named = [
    ...workspaceRoots,
    ...(context?.writableRoots ?? []).map((uri) => rootPath(uri, 'writableRoots')),
  ];
  const deniedPaths = credentialStoreDenials(
    home,
    named.map((path) => resolve(path)),
  );
  return {
    ...base,
    fullDiskWrite: false,
    writableRoots: roots,
    network: networkOf(context, 'off'),
    deniedPaths,
  };
}

/**
 * Resolves either wire form of `sandbox` (execd's `{profile, …}` or the original's
 * `{permissions, …}`) into one {@link SandboxPolicy}. Absent means `danger-full-access`.
 */
export function resolveSandboxParam(
  param: SandboxParam | undefined,
  cwd: string,
  options: ResolvePolicyOptions = {},
): SandboxPolicy {
  if (param !== undefined && isFileSystemSandboxContext(param)) {
    if (!isAbsolute(cwd))
      throw new ExecError('invalidParams', `sandbox cwd must be absolute: ${JSON.stringify(cwd)}`);
    return resolvePermissionProfile(param, cwd, options);
  }
  return resolveSandboxPolicy(param, cwd, options);
}
