// @execd/exec-server/server: the exec-server (sessions, transports) for embedders and the CLI.

export { AUTH_TOKEN_ENV_VAR, BearerTokenVerifier, loadAuthToken } from './auth.ts';
export { ConnectionHandler, type ConnectionHandlerOptions } from './connection-handler.ts';
export {
  ConnectionProcessor,
  type ConnectionProcessorOptions,
  type ConnectionTransport,
  SERVER_REQUEST_ID_PREFIX,
} from './connection-processor.ts';
export {
  DEFAULT_CAPABILITIES,
  type LocalEnvironmentInfoOptions,
  localEnvironmentInfo,
} from './environment-info.ts';
export {
  type HealthAddress,
  type HealthListener,
  type HealthListenerOptions,
  listenHealth,
  parseHealthListen,
} from './health-listener.ts';
export {
  type HeapPolicy,
  type HeapPolicyOptions,
  installHeapPolicy,
  YOUNG_GENERATION_BYTES,
} from './heap-policy.ts';
export { hostNameOf, isAllowedHost, MISDIRECTED_REQUEST_STATUS } from './host-check.ts';
export { type Readiness, UPGRADE_REQUIRED_HINT } from './http-endpoints.ts';
export { MAX_PENDING_INBOUND_BYTES, MAX_PENDING_INBOUND_MESSAGES } from './inbound-queue.ts';
export { LineSplitter, type SplitResult } from './line-splitter.ts';
export {
  DEFAULT_LISTEN_URL,
  formatWebSocketUrl,
  isLoopbackAddress,
  type ListenTarget,
  parseListenUrl,
} from './listen-url.ts';
export {
  type CheckLocalPeerOptions,
  checkLocalPeer,
  type LocalPeerCheck,
  PEER_ATTRIBUTION_TIMEOUT_MS,
  type PeerVerdict,
} from './local-peer.ts';
export {
  createJsonLineLogger,
  isLogLevel,
  type JsonLineLoggerOptions,
  LOG_LEVELS,
  type LogLevel,
} from './logger.ts';
export { ExecServerMetrics, type SessionEvent, type SessionSnapshot, type StreamedVia } from './metrics.ts';
export {
  type GateDecision,
  MAX_QUEUED_NOTIFICATION_BYTES,
  NotificationGate,
  type NotificationGateOptions,
  type NotificationGateStats,
  OUTPUT_PAUSE_QUEUED_BYTES,
  OUTPUT_RESUME_QUEUED_BYTES,
} from './notification-gate.ts';
export { type Refusal, RequestGuard, type RequestGuardOptions } from './request-guard.ts';
export {
  type DispatchMode,
  MAX_CONCURRENT_REQUESTS,
  parseDispatchMode,
  RequestLane,
} from './request-lanes.ts';
export {
  dialExecHost,
  ENVIRONMENT_ID_HEADER,
  REDIAL_INITIAL_DELAY_MS,
  REDIAL_MAX_DELAY_MS,
  type ReverseDialer,
  type ReverseDialerOptions,
  redialDelayMs,
} from './reverse-dialer.ts';
export {
  MAX_PENDING_SERVER_REQUESTS,
  ServerRequests,
  type ServerRequestsOptions,
  type ServerResponseOutcome,
} from './server-requests.ts';
export {
  type CreateProcessTable,
  DETACHED_SESSION_TTL_MS,
  type ProcessTableContext,
  RESUME_LIVENESS_TIMEOUT_MS,
  type SessionAttachment,
  SessionHandle,
  SessionRegistry,
  type SessionRegistryOptions,
} from './session-registry.ts';
export { type ExecServerOptions, type RunningExecServer, startExecServer } from './start-exec-server.ts';
export {
  type ReverseExecServerOptions,
  type RunningReverseExecServer,
  startReverseExecServer,
} from './start-reverse-exec-server.ts';
export { STDIO_CONNECTION_LABEL, StdioTransport, type StdioTransportOptions } from './stdio-transport.ts';
export { OVERSIZE_FRAME_MARGIN_BYTES } from './websocket-listener.ts';
export { KEEPALIVE_MISSES_BEFORE_TERMINATE, WEBSOCKET_KEEPALIVE_INTERVAL_MS } from './websocket-transport.ts';
