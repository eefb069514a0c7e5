import type { SandboxPreference, SandboxType } from '@execd/protocol';
import type { SandboxPolicy } from './policy.ts';

/** Options of {@link selectSandbox}. */
export interface SelectSandboxOptions {
  /** The platform to select for (default `process.platform`). */
  readonly platform?: NodeJS.Platform;
  /** Windows only: whether the restricted-token sandbox is enabled (default false, as the original). */
  readonly windowsSandbox?: boolean;
  /** A managed network proxy is in force, which needs a sandbox even under full access. */
  readonly managedNetwork?: boolean;
}

/** The sandbox this platform offers, or `none` (Windows unless enabled, other platforms). */
export function platformSandbox(options: SelectSandboxOptions = {}): SandboxType {
  const platform = options.platform ?? process.platform;
  if (platform === 'linux') return 'linuxSeccomp';
  if (platform === 'darwin') return 'macosSeatbelt';
  if (platform === 'win32' && options.windowsSandbox === true) return 'windowsRestrictedToken';
  return 'none';
}

/** True when the policy confines something: a writable-path limit, a network limit, or a managed network. */
export function policyNeedsSandbox(policy: SandboxPolicy, options: SelectSandboxOptions = {}): boolean {
  return !(policy.fullDiskWrite && policy.network === 'full') || options.managedNetwork === true;
}

/**
 * Chooses the sandbox for a first attempt, as the original's `select_initial` (spec §5.1):
 * `forbid` → `none`; `require` → the platform's sandbox; `auto` → the platform's sandbox only
 * when the policy confines something. Where the platform has no sandbox the answer is `none`,
 * also for `require` (as the original); callers that must not run unconfined check for it.
 */
export function selectSandbox(
  policy: SandboxPolicy,
  preference: SandboxPreference = 'auto',
  options: SelectSandboxOptions = {},
): SandboxType {
  if (preference === 'forbid') return 'none';
  if (preference === 'require') return platformSandbox(options);
  return policyNeedsSandbox(policy, options) ? platformSandbox(options) : 'none';
}
