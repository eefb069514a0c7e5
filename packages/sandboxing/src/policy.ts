import { isAbsolute, resolve } from 'node:path';
import {
  ExecError,
  fileUriToPath,
  type NetworkMode,
  type PermissionProfileName,
  type SandboxContext,
} from '@execd/protocol';

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
}

/** Options of {@link resolveSandboxPolicy}. */
export interface ResolvePolicyOptions {
  /** Source of `TMPDIR` (the executor's environment, as the original). Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
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
export function withManagedNetwork(context: SandboxContext | undefined): SandboxContext {
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
  if (profile === 'read-only') {
    return { ...base, fullDiskWrite: false, writableRoots: [], network: networkOf(context, 'off') };
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
  const tmpdir = (options.env ?? process.env).TMPDIR;
  if (context?.excludeTmpdirEnvVar !== true && tmpdir !== undefined && isAbsolute(tmpdir)) add(tmpdir, false);
  return { ...base, fullDiskWrite: false, writableRoots: roots, network: networkOf(context, 'off') };
}
