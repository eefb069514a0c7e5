// Per-command resource limits on cgroups (v2 or v1): processes, memory, CPU time, and the
// launcher lines for RLIMIT_FSIZE. The package's src/index.ts re-exports from here.

export { EXECD_GROUP_NAME } from './candidate.ts';
export {
  CLOSE_TIMEOUT_MS,
  type CommandCgroup,
  type CreateCommandCgroupOptions,
  createCommandCgroup,
} from './command-cgroup.ts';
export { CPU_POLL_INTERVAL_MS } from './cpu-watch.ts';
export {
  DEFAULT_COMMAND_LIMITS,
  DEFAULT_MAX_FILE_BYTES,
  DEFAULT_MAX_MEMORY_BYTES,
  DEFAULT_MAX_PROCESSES,
} from './defaults.ts';
export { type DetectResourceControlOptions, detectResourceControl } from './detect.ts';
export { EXECUTOR_LEAF_NAME } from './detect-cgroup2.ts';
export { describeLimitsInForce, formatBytes, formatLimitHit } from './format.ts';
export {
  LAUNCHER_LIMITS_FAILED_EXIT_CODE,
  type LauncherLimitOptions,
  launcherLimitLines,
} from './launcher-lines.ts';
export type {
  CommandLimits,
  LimitEvents,
  ResourceControl,
  ResourceControlKind,
  ResourceController,
} from './resource-control.ts';
export { type SweepOptions, type SweepResult, sweepStaleCommandGroups } from './sweep.ts';
export {
  MIN_FILE_LIMIT_BYTES,
  MIN_MEMORY_LIMIT_BYTES,
  MIN_PROCESS_LIMIT,
  validateLimits,
} from './validate-limits.ts';
