import * as v from 'valibot';
import { opt, PathUri } from './common.ts';

/** Sandbox mechanism that a process actually runs under (wire names as the original). */
export const SandboxType = v.picklist(['none', 'macosSeatbelt', 'linuxSeccomp', 'windowsRestrictedToken']);
export type SandboxType = v.InferOutput<typeof SandboxType>;

/** Permission profile names, as the original's CLI `--sandbox` values. */
export const PermissionProfileName = v.picklist(['read-only', 'workspace-write', 'danger-full-access']);
export type PermissionProfileName = v.InferOutput<typeof PermissionProfileName>;

/** How insistently a sandbox is applied: `auto` only when the profile needs one. */
export const SandboxPreference = v.picklist(['auto', 'require', 'forbid']);
export type SandboxPreference = v.InferOutput<typeof SandboxPreference>;

/** Network reach of a sandboxed command: `proxied` goes only through the managed allow-list proxy. */
export const NetworkMode = v.picklist(['full', 'off', 'proxied']);
export type NetworkMode = v.InferOutput<typeof NetworkMode>;

/**
 * `ExecParams.sandbox`: the portable sandbox intent; the executor builds the wrapper argv.
 * This is execd's wire form (documented in the protocol reference); it carries a permission profile.
 */
export const SandboxContext = v.object({
  /** The permission profile. */
  profile: PermissionProfileName,
  /** Project roots, writable under `workspace-write` (default: the process cwd). An empty list means none. */
  workspaceRoots: opt(v.array(PathUri)),
  /** Extra writable roots under `workspace-write`. */
  writableRoots: opt(v.array(PathUri)),
  /** Network allowed under `workspace-write`/`read-only` (default false). Superseded by `network`. */
  networkAccess: opt(v.boolean()),
  /** Network mode; `proxied` needs `managedNetwork`/`networkProxy`. Default from `networkAccess`. */
  network: opt(NetworkMode),
  /** Do not make `$TMPDIR` writable. */
  excludeTmpdirEnvVar: opt(v.boolean()),
  /** Do not make `/tmp` writable. */
  excludeSlashTmp: opt(v.boolean()),
  /** `auto` (default), `require` or `forbid`. */
  mode: opt(SandboxPreference),
});
export type SandboxContext = v.InferOutput<typeof SandboxContext>;
