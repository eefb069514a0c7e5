// Tuning values of the process table, as the original's `local_process.rs` (spec §3.1).

/**
 * Retained output bytes per process; the oldest chunks are evicted beyond it. Large enough to
 * replay a typical command's whole output after a reconnect, small enough for many processes.
 */
export const RETAINED_OUTPUT_MAX_BYTES: number = 1024 * 1024;

/**
 * Retained output chunks per process. Keeps a full replay under the JSON codec's 262,144-value
 * budget (each chunk is a handful of values), even when a child writes one byte at a time.
 */
export const RETAINED_OUTPUT_MAX_CHUNKS = 50_000;

/**
 * Events kept for in-process `events()` replay (the original's event channel capacity); a
 * subscriber further behind than this recovers from the retained output instead.
 */
export const EVENT_HISTORY_MAX_EVENTS = 256;

/** Output bytes kept for in-process `events()` replay (as the original's event log). */
export const EVENT_HISTORY_MAX_BYTES: number = 1024 * 1024;

/**
 * Accepted `writeId`s remembered per process, oldest forgotten first. A client retries a write
 * only for its last few calls after a reconnect, so 4,096 covers any realistic backlog.
 */
export const RETAINED_WRITE_IDS_PER_PROCESS = 4096;

/**
 * How long a closed process stays readable before its entry is removed and its id can be reused:
 * long enough for a client that lost its connection to resume (the detached-session TTL is 30 s).
 */
export const EXITED_PROCESS_RETENTION_MS = 30_000;

/**
 * After the child exits, wait at most this long for its streams to end before announcing the
 * exit, so output written just before `exit` gets a seq before `exited` (a pipe's last bytes
 * and the exit notification race). A grandchild holding the pipe open only delays `exited` by this.
 */
export const EXIT_OUTPUT_GRACE_MS = 50;

/** The longest delay `setTimeout` honours (larger values fire at once); long waits are clamped to it. */
export const MAX_TIMER_MS: number = 2 ** 31 - 1;

/**
 * Cap on how long output is drained after the child exits. The original reads until every
 * holder of the pipe has closed it (late grandchild output is part of the process), so this is
 * the largest timer Node supports (about 24.8 days): in practice, never.
 */
export const STREAM_DRAIN_TIMEOUT_MS: number = MAX_TIMER_MS;

/**
 * On shutdown, how long to wait for a killed child's streams to end. Killing the session reaches
 * every descendant but one that started its own session; such a daemon may hold the pipe forever,
 * and shutting down must not wait for it (the original's `IO_DRAIN_TIMEOUT_MS`).
 */
export const SHUTDOWN_DRAIN_TIMEOUT_MS = 2000;
