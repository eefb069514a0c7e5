// @execd/exec-server: the process table and in-process backend, the shared interfaces, and the
// child environment policy. The WebSocket/stdio server is under `./server`, the client under `./client`.

export {
  type BaseEnv,
  CORE_ENV_VARS,
  type CreateEnvOptions,
  childEnv,
  compileEnvPattern,
  createEnv,
  DEFAULT_EXCLUDE_PATTERNS,
  type EnvPattern,
  EXIT_ON_STDIN_CLOSE_ENV_VAR,
  isNonInheritableEnvVar,
  matchesAny,
  NON_INHERITABLE_ENV_VARS,
  removeNonInheritableEnvVars,
} from './env/index.ts';
export {
  type Environment,
  EnvironmentManager,
  LOCAL_ENVIRONMENT_ID,
  LocalEnvironment,
  type LocalEnvironmentOptions,
  RemoteEnvironment,
} from './environment/index.ts';
export type { LogFields, Logger } from './internal/logger.ts';
export { NOOP_LOGGER } from './internal/logger.ts';
export {
  defaultSandboxDenied,
  defaultSpawner,
  EVENT_HISTORY_MAX_BYTES,
  EVENT_HISTORY_MAX_EVENTS,
  type EventsOptions,
  EXIT_OUTPUT_GRACE_MS,
  EXITED_PROCESS_RETENTION_MS,
  LocalBackend,
  type LocalBackendOptions,
  LocalExecProcess,
  LocalProcessTable,
  type LocalProcessTableOptions,
  type LocalSpawnRequest,
  type LocalSpawnResult,
  NETWORK_POLICY_HOST_MAX_BYTES,
  NETWORK_POLICY_REASON_MAX_BYTES,
  type NetworkPolicyRequester,
  RETAINED_OUTPUT_MAX_BYTES,
  RETAINED_OUTPUT_MAX_CHUNKS,
  RETAINED_WRITE_IDS_PER_PROCESS,
  type SandboxDenialCheck,
  type SandboxedOutput,
  SHUTDOWN_DRAIN_TIMEOUT_MS,
  type Spawner,
  STREAM_DRAIN_TIMEOUT_MS,
  sandboxedCaptureRunner,
} from './local/index.ts';
export type {
  ExecBackend,
  ExecProcess,
  ExecProcessEvent,
  ExecReadOptions,
  ProcessNotification,
  ProcessTable,
} from './types.ts';
