import * as v from 'valibot';
import { RpcError } from '../errors.ts';
import { describeIssues } from '../issues.ts';
import { opt, PathUri } from './common.ts';
import { FileSystemSandboxContext } from './permission-profile.ts';

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

/**
 * The `sandbox` field of `process/start` and of the `fs/*` methods: execd's {@link SandboxContext}
 * (has `profile`) or the original's {@link FileSystemSandboxContext} (has `permissions`), as Codex
 * 0.169.0 sends it. The form is chosen by which of the two keys is present, so a bad value reports
 * the issues of that form only.
 */
export const SandboxParam = v.lazy((input: unknown) =>
  typeof input === 'object' && input !== null && 'permissions' in input && !('profile' in input)
    ? FileSystemSandboxContext
    : SandboxContext,
);
export type SandboxParam = v.InferOutput<typeof SandboxParam>;

/** True when a decoded {@link SandboxParam} is the original's form. */
export function isFileSystemSandboxContext(param: SandboxParam): param is FileSystemSandboxContext {
  return 'permissions' in param;
}

/**
 * Decodes a raw `sandbox` value (either form) on its own, as the server does inside a request;
 * throws an `invalidParams` RpcError naming the bad field (`sandbox.permissions.…`).
 */
export function decodeSandboxParam(raw: unknown): SandboxParam {
  const parsed = v.safeParse(SandboxParam, raw);
  if (parsed.success) return parsed.output;
  const issues = parsed.issues.map((issue) => ({
    ...issue,
    path: [{ key: 'sandbox' }, ...(issue.path ?? [])],
  }));
  throw new RpcError('invalidParams', `invalid sandbox: ${describeIssues(issues as typeof parsed.issues)}`);
}
