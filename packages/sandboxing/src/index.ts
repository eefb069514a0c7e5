// @execd/sandboxing: permission profiles, sandbox selection, bubblewrap (Linux) and Seatbelt
// (macOS) wrappers, denial detection, and spawnProcess = transform + pty-utils.

export type { DeniedPathPlan } from './access-plan.ts';
export { type ContainmentInfo, detectContainment } from './containment.ts';
export { CREDENTIAL_STORES, credentialStoreDenials } from './credential-stores.ts';
export {
  type CommandOutput,
  hasDenialKeyword,
  isLikelySandboxDenied,
  QUICK_REJECT_EXIT_CODES,
  SANDBOX_DENIAL_KEYWORDS,
  SIGSYS_EXIT_CODE,
} from './denial.ts';
export { type DescribeDenialOptions, describeSandboxDenial, type SandboxDenial } from './denial-details.ts';
export { DENY_GLOB_MAX_DIRS, DENY_GLOB_MAX_MATCHES, expandDenyGlobs, matchesDenyGlob } from './deny-globs.ts';
export {
  type FileSystemPlan,
  MASKED_WHEN_MISSING,
  type PlanFileSystemOptions,
  PROTECTED_NAMES,
  type ProtectedPath,
  planFileSystem,
  type WritableRootPlan,
} from './file-system-plan.ts';
export { GIT_SCAN_MAX_DEPTH, GIT_SCAN_MAX_DIRS, GIT_SCAN_SKIPPED_DIRS } from './git-metadata.ts';
export { hostSecretsToMask, type MaskedPath, ROOT_ONLY_HOST_SECRETS } from './host-secrets.ts';
export {
  CLOSE_TIMEOUT_MS,
  type CommandCgroup,
  type CommandLimits,
  type CreateCommandCgroupOptions,
  createCommandCgroup,
  DEFAULT_COMMAND_LIMITS,
  DEFAULT_MAX_FILE_BYTES,
  DEFAULT_MAX_MEMORY_BYTES,
  DEFAULT_MAX_PROCESSES,
  type DetectResourceControlOptions,
  describeLimitsInForce,
  detectResourceControl,
  formatLimitHit,
  LAUNCHER_LIMITS_FAILED_EXIT_CODE,
  type LimitEvents,
  launcherLimitLines,
  type ResourceControl,
  type ResourceControlKind,
  type ResourceController,
  sweepStaleCommandGroups,
  validateLimits,
} from './limits/index.ts';
export { type BwrapArgsOptions, buildBwrapArgs } from './linux/bwrap-args.ts';
export {
  BWRAP_PROBE_TIMEOUT_MS,
  type BwrapCapabilities,
  type BwrapProbeOptions,
  isUserNamespaceFailure,
  probeBwrap,
} from './linux/bwrap-probe.ts';
export { commandEnvFlags, LAUNCHER_ENV, SECCOMP_FD, withLauncher } from './linux/launcher.ts';
export { type LocateBwrapOptions, locateBwrap } from './linux/locate-bwrap.ts';
export {
  ALWAYS_DENIED_SYSCALLS,
  buildSeccompFilter,
  NETWORK_DENIED_SYSCALLS,
  type SeccompArch,
  type SeccompFilterOptions,
  seccompArchOf,
} from './linux/seccomp-filter.ts';
export type { WaiterKind } from './linux/waiter.ts';
export {
  buildSeatbeltArgv,
  buildSeatbeltPolicy,
  SANDBOX_EXEC_PATH,
  type SeatbeltPolicy,
} from './macos/seatbelt.ts';
export { originalSandboxFor } from './original-form.ts';
export {
  canonicalPath,
  type SandboxPathAccess,
  type SandboxPathAccessOptions,
  sandboxPathAccess,
} from './path-access.ts';
export { LINUX_MINIMAL_READ_ROOTS, resolvePermissionProfile } from './permission-profile-policy.ts';
export {
  DENY_GLOB_MAX_DEPTH,
  isNetworkDisabled,
  type PolicyPath,
  type ResolvePolicyOptions,
  resolveSandboxParam,
  resolveSandboxPolicy,
  type SandboxPolicy,
  SLASH_TMP,
  type WritableRoot,
  withManagedNetwork,
} from './policy.ts';
export {
  prepareSandboxCommand,
  type SandboxCommand,
  type SandboxCommandRequest,
  type SandboxProxyRouting,
  type SandboxSelection,
  sandboxFromContext,
} from './prepare.ts';
export { PreparedSandboxes } from './prepared-sandboxes.ts';
export type {
  PreparedSandboxesOptions,
  PreparedSandboxStats,
  WaiterEnd,
} from './prepared-sandboxes-options.ts';
export { DEFAULT_ROOT_PINS, SandboxRootPins } from './root-pins.ts';
export { NETWORK_DISABLED_ENV_VAR, SEATBELT_ENV_VAR } from './sandbox-plan.ts';
export { platformSandbox, policyNeedsSandbox, type SelectSandboxOptions, selectSandbox } from './select.ts';
export { type SpawnedLimits, type SpawnRequest, type SpawnResult, spawnProcess } from './spawn.ts';
export type { SpawnedNetwork, SpawnManagedNetwork } from './spawn-network.ts';
