// @execd/exec-server: the process table and in-process backend, and a start's child environment.
// The WebSocket/stdio server is under `./server`. The contract the backend implements (ExecBackend,
// ExecProcess, StartOptions, ...) is `@execd/protocol/contract`; the client is `@execd/exec-client`.

export { childEnv, EXIT_ON_STDIN_CLOSE_ENV_VAR } from './env/child-env.ts';
export { FS_HANDLE_ID_MAX_BYTES, FS_MAX_OPEN_HANDLES } from './fs/file-handle-table.ts';
export type { PathAccessResolver } from './fs/fs-sandbox.ts';
export {
  FS_READ_FILE_LIMIT_BYTES,
  FS_READ_FILE_MAX_BYTES,
  LocalFileSystem,
  type LocalFileSystemOptions,
} from './fs/local-file-system.ts';
export { WATCH_MISSING_MAX_PATHS } from './fs/missing-watch.ts';
export {
  defaultSandboxDenied,
  defaultSpawner,
  EVENT_HISTORY_MAX_BYTES,
  EVENT_HISTORY_MAX_EVENTS,
  EXIT_OUTPUT_GRACE_MS,
  EXITED_PROCESS_RETENTION_MS,
  type GuardableLaunch,
  type GuardedPaths,
  guardAgainstOrphans,
  guardSpawned,
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
export type { ProcessNotification, ProcessTable } from './types.ts';
