// The in-process process table (the original's LocalProcess) and the local ExecBackend.

export { defaultSandboxDenied, defaultSpawner, sandboxedCaptureRunner } from './default-spawner.ts';
export {
  EVENT_HISTORY_MAX_BYTES,
  EVENT_HISTORY_MAX_EVENTS,
  EXIT_OUTPUT_GRACE_MS,
  EXITED_PROCESS_RETENTION_MS,
  RETAINED_OUTPUT_MAX_BYTES,
  RETAINED_OUTPUT_MAX_CHUNKS,
  RETAINED_WRITE_IDS_PER_PROCESS,
  SHUTDOWN_DRAIN_TIMEOUT_MS,
  STREAM_DRAIN_TIMEOUT_MS,
} from './limits.ts';
export { LocalBackend, type LocalBackendOptions } from './local-backend.ts';
export { LocalExecProcess } from './local-exec-process.ts';
export {
  LocalProcessTable,
  type LocalProcessTableOptions,
  type StartedProcess,
} from './local-process-table.ts';
export {
  type GuardableLaunch,
  type GuardedPaths,
  guardAgainstOrphans,
  guardSpawned,
} from './orphan-guard.ts';
export {
  NETWORK_POLICY_HOST_MAX_BYTES,
  NETWORK_POLICY_REASON_MAX_BYTES,
  type NetworkPolicyRequester,
  ProcessNetwork,
  type ProcessNetworkOptions,
  wireProtocol,
} from './process-network.ts';
export type { ProcessRecord, ProcessState } from './process-record.ts';
export type {
  LocalSpawnRequest,
  LocalSpawnResult,
  SandboxDenialCheck,
  SandboxedOutput,
  Spawner,
} from './spawner.ts';
