// @execd/pty-utils: spawn a child in a PTY or on pipes behind one SpawnedProcess shape; the child
// environment policy; executable lookup; helper processes and threads kept off the event loop.

export {
  type BaseEnv,
  CORE_ENV_VARS,
  type CreateEnvOptions,
  createEnv,
  removeNonInheritableEnvVars,
} from './child-env/create-env.ts';
export {
  DEFAULT_EXCLUDE_EXCEPTIONS,
  DEFAULT_EXCLUDE_PATTERNS,
  isDefaultExcludeException,
  isNonInheritableEnvVar,
  NON_INHERITABLE_ENV_VARS,
} from './child-env/credential-env-names.ts';
export { compileEnvPattern, type EnvPattern, matchesAny } from './child-env/env-pattern.ts';
export {
  DEFAULT_DRAIN_TIMEOUT_MS,
  DEFAULT_PTY_COLS,
  DEFAULT_PTY_ROWS,
  DEFAULT_TERMINATE_GRACE_MS,
  MAX_CHUNK_BYTES,
  OUTPUT_HIGH_WATER_BYTES,
  OUTPUT_LOW_WATER_BYTES,
} from './constants.ts';
export { DEFAULT_EXEC_PATH, type ResolvedSpawn, resolveSpawn } from './executables/resolve-program.ts';
export { tempDirContaining, tempDirs } from './executables/temp-dirs.ts';
export {
  findTrustedExecutable,
  TRUSTED_PATH,
  TRUSTED_SYSTEM_DIRS,
  trustedExecutable,
  untrustedReason,
} from './executables/trusted-executable.ts';
export {
  exitCodeFromStatus,
  ptyExitCodeFromStatus,
  signalName,
  signalNumber,
  toExitStatus,
  toPtyExitStatus,
} from './exit-status.ts';
export {
  type ForkedChild,
  type ForkedTerminalChild,
  ForkServer,
  type ForkServerHelper,
  type ForkServerOptions,
  type ForkServerStats,
  forkServerHelperProgram,
} from './fork-server/fork-server.ts';
export { closeInheritedDescriptors } from './inherited-descriptors.ts';
export { type InputWaitReason, probeInputWait } from './input-wait.ts';
export {
  INPUT_WAIT_ACTIVE_WINDOW_MS,
  INPUT_WAIT_MAX_PROBE_INTERVAL_MS,
  INPUT_WAIT_SETTLE_MS,
  InputWaitWatcher,
  type InputWaitWatcherOptions,
} from './input-wait-watcher.ts';
export { CGROUP_JOIN_FAILED_EXIT_CODE, joinWrapperPerl } from './internal/cgroup-join.ts';
export {
  isProcessAlive,
  processGroupAlive,
  sessionPids,
  signalProcessGroup,
  signalSession,
  signalSessionOthers,
} from './process-group.ts';
export { ProgramWorker, type ProgramWorkerOptions } from './program-worker.ts';
export { spawnPipe } from './spawn-pipe.ts';
export { spawnPty } from './spawn-pty.ts';
export { isStdinClosedError, STDIN_CLOSED_CODE, stdinClosedError } from './stdin-closed.ts';
export type {
  ExitStatus,
  OutputChunk,
  OutputStreamName,
  PipeSpawnOptions,
  PtySpawnOptions,
  SpawnedProcess,
  SpawnOptions,
  TerminateOptions,
} from './types.ts';
