// Tuning values of the exec-server client, as the original's `client.rs`, `rpc.rs` and
// `client_recovery.rs` (spec §2.2, §2.3, §3.5).

/** Opening the WebSocket (TCP + upgrade) gives up after this long: the original's `CONNECT_TIMEOUT`. */
export const CONNECT_TIMEOUT_MS = 10_000;

/** `initialize` gives up after this long: the original's `INITIALIZE_TIMEOUT`. */
export const INITIALIZE_TIMEOUT_MS = 10_000;

/** `environment/info` gives up after this long (the executor may probe its shell first). */
export const ENVIRONMENT_INFO_TIMEOUT_MS = 30_000;

/** `environment/status` gives up after this long: it is a liveness probe. */
export const ENVIRONMENT_STATUS_TIMEOUT_MS = 10_000;

/**
 * Requests one connection may have in flight: the original's `MAX_IN_FLIGHT_REGULAR_CALLS`.
 * Bounds the pending-call table against a caller that never awaits; a real agent has a handful.
 */
export const MAX_IN_FLIGHT_CALLS = 1024;

/**
 * Extra slots kept free for `process/terminate` (the original's `RESERVED_CLEANUP_CALLS`), so
 * cleanup still gets through when the regular slots are exhausted.
 */
export const RESERVED_CLEANUP_CALLS = 1;

/**
 * Reorder buffer per process: events held while an earlier seq is missing. The original's
 * `MAX_PENDING_PROCESS_EVENTS`; past it the buffer stops growing and the hole is filled with
 * `process/read` (the server retains 1 MiB per process) instead of holding more in memory.
 */
export const MAX_PENDING_PROCESS_EVENTS = 256;

/** Output bytes the reorder buffer of one process may hold (see {@link MAX_PENDING_PROCESS_EVENTS}). */
export const MAX_PENDING_PROCESS_EVENT_BYTES: number = 1024 * 1024;

/** Events the client keeps per process for `events()` replay: the original client's event log. */
export const CLIENT_EVENT_LOG_MAX_EVENTS = 256;

/** Output bytes the client keeps per process for `events()` replay. */
export const CLIENT_EVENT_LOG_MAX_BYTES: number = 1024 * 1024;

/**
 * How long a hole in the pushed events may stay open before the client fills it with
 * `process/read`. The original server emits output and exit from different tasks, so a short
 * reordering is normal; execd's server drops notifications only for a client so slow that its
 * backlog passes the 16 MiB safety cap (below it the session's output is held back instead), and
 * then only a read closes the hole.
 */
export const GAP_FILL_DELAY_MS = 50;

/**
 * Session recovery gives up after this long: the original's `SESSION_RECOVERY_TIMEOUT`, which
 * leaves margin inside the server's 30 s detached-session window.
 */
export const SESSION_RECOVERY_TIMEOUT_MS = 25_000;

/** First pause between reconnect attempts: the original's `SESSION_RECOVERY_RETRY_INTERVAL`. */
export const RECOVERY_INITIAL_DELAY_MS = 100;

/**
 * Longest pause between reconnect attempts. Backoff keeps a dead host from being hammered while
 * still trying several times within the recovery deadline.
 */
export const RECOVERY_MAX_DELAY_MS = 2_000;

/**
 * Client keepalive: a ping every this long; a connection from which nothing (not even a pong) has
 * arrived for two intervals is dead and is dropped, which starts recovery. Half the server's 30 s
 * ping interval, so a silently broken network is noticed within about 30 s.
 */
export const CLIENT_KEEPALIVE_INTERVAL_MS = 15_000;

/** Bounded wait for the server's close frame after we sent ours, before the socket is destroyed. */
export const CLOSE_HANDSHAKE_TIMEOUT_MS = 1_000;

/**
 * Bounded wait for a stdio command to exit after its stdin was closed, before it is killed. At
 * EOF the server terminates every process of its session first, so this is longer than the
 * WebSocket close handshake (the original's `dropping_stdio_client_terminates_spawned_process`).
 */
export const STDIO_CLOSE_TIMEOUT_MS = 5_000;

/** The tail of a stdio command's stderr kept for the close reason (where ssh says what failed). */
export const STDIO_STDERR_TAIL_BYTES = 2_048;

/**
 * Network denials a RemoteProcess keeps for `networkDenials()`: the newest 1000, as the server's
 * proxy keeps for `LocalExecProcess.networkDenials()`.
 */
export const REMOTE_NETWORK_DENIALS_MAX = 1000;
