// @execd/exec-client: the exec-server client (remote processes, ordered events, session recovery,
// exactly-once writes, network-policy answering) and the remote ExecBackend. The contract it
// implements (ExecBackend, ExecProcess, StartOptions, NetworkPolicyDecider, ...) is exported by
// `@execd/protocol/contract`.

export { INITIAL_RESUME_MESSAGE, REPLACEMENT_IN_PROGRESS_MESSAGE } from './accepted-channel-source.ts';
export type { ExecServerClientOptions } from './client-options.ts';
export type { ClientState } from './client-state.ts';
export { UpgradeRefusedError } from './errors.ts';
export {
  type AcceptExecServersOptions,
  type AcceptedEnvironment,
  acceptExecServers,
  DEFAULT_ENVIRONMENT_ID,
  ENVIRONMENT_ID_HEADER,
  ExecServerAcceptor,
} from './exec-server-acceptor.ts';
export { ExecServerClient } from './exec-server-client.ts';
export {
  CLIENT_EVENT_LOG_MAX_BYTES,
  CLIENT_EVENT_LOG_MAX_EVENTS,
  CLIENT_KEEPALIVE_INTERVAL_MS,
  CONNECT_TIMEOUT_MS,
  ENVIRONMENT_INFO_TIMEOUT_MS,
  ENVIRONMENT_STATUS_TIMEOUT_MS,
  GAP_FILL_DELAY_MS,
  INITIALIZE_TIMEOUT_MS,
  MAX_IN_FLIGHT_CALLS,
  MAX_PENDING_PROCESS_EVENT_BYTES,
  MAX_PENDING_PROCESS_EVENTS,
  RECOVERY_INITIAL_DELAY_MS,
  RECOVERY_MAX_DELAY_MS,
  REMOTE_NETWORK_DENIALS_MAX,
  RESERVED_CLEANUP_CALLS,
  SESSION_RECOVERY_TIMEOUT_MS,
  STDIO_CLOSE_TIMEOUT_MS,
  STDIO_STDERR_TAIL_BYTES,
} from './limits.ts';
export {
  DEFAULT_ASK_REASON,
  DEFAULT_DENY_REASON,
  type NetworkPolicyDecisionListener,
  toWireDecision,
} from './network-policy.ts';
export { RemoteBackend, type RemoteBackendOptions } from './remote-backend.ts';
export { RemoteFileSystem } from './remote-file-system.ts';
export { type CallOptions, RemoteProcess } from './remote-process.ts';
export {
  RUN_DEFAULT_ENV_POLICY,
  RUN_MAX_OUTPUT_BYTES,
  type RunHost,
  type RunOptions,
  type RunResult,
  runCommand,
} from './run.ts';
export type { StdioCommand } from './stdio-channel.ts';
