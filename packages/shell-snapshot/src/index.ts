// @execd/shell-snapshot: capture a login shell's state once, restore it for every command, in memory.

export { ShellSnapshotCache } from './cache.ts';
export { stableStringify } from './cache-key.ts';
export type { ShellSnapshotCacheOptions, SnapshotLaunchInput, SnapshotPrepareResult } from './cache-types.ts';
export { type CaptureResult, type CaptureSnapshotOptions, captureSnapshot } from './capture.ts';
export {
  type CaptureFailureReason,
  type CaptureLimits,
  type CaptureRun,
  type CaptureRunner,
  DEFAULT_CAPTURE_LIMITS,
  runCaptureCommand,
} from './capture-runner.ts';
export { captureScript, SNAPSHOT_END_MARKER, SNAPSHOT_MARKER } from './capture-script.ts';
export {
  MAX_CACHED_SNAPSHOTS,
  MAX_SNAPSHOT_BYTES,
  MAX_SNAPSHOT_ENV_VALUE_BYTES,
  MAX_SNAPSHOT_SCOPE_BYTES,
  SNAPSHOT_DRAIN_AFTER_EXIT_MS,
  SNAPSHOT_MAX_RETRY_BACKOFF_MS,
  SNAPSHOT_RETRY_BACKOFF_MS,
  SNAPSHOT_TIMEOUT_MS,
} from './limits.ts';
export { type CaptureSections, type ParsedCapture, parseCaptureOutput } from './parse-capture.ts';
export { startupFiles, startupFilesStamp } from './rc-files.ts';
export { renderState, STRIPPED_SET_OPTIONS, STRIPPED_ZSH_OPTIONS } from './render-state.ts';
export {
  type LaunchCommand,
  pathExportsAfterRestore,
  RESTORE_FAILED_MESSAGE,
  type RestoreOptions,
  restoreCommand,
  type ShellSnapshot,
  SNAPSHOT_STATE_ENV_PREFIX,
  shellQuote,
  splitState,
} from './restore.ts';
export {
  RESTORE_FLAG,
  RESTORE_STARTUP,
  SNAPSHOT_SHELLS,
  type SnapshotShell,
  toSnapshotShell,
} from './shell-kind.ts';
export {
  type CreateEnv,
  filterSnapshotEnv,
  MANAGED_PROXY_ENV_VARS,
  PROXY_ACTIVE_ENV_VAR,
  SHELL_OWNED_ENV_VARS,
  type SnapshotEnvOptions,
} from './snapshot-env.ts';
export { checkSnapshotRequest, type SnapshotCheck } from './validate.ts';
