/**
 * Largest output chunk handed to a consumer. Matches the original's 8192-byte read buffer
 * (spec §3.1, §5.7) so that every layer above sees the same chunk granularity; larger reads are
 * split into views of the same memory, never copied.
 */
export const MAX_CHUNK_BYTES = 8192;

/**
 * Buffered-but-unread output above which the child's output is paused (pipe readables paused,
 * PTY master no longer read). 1 MiB equals the original's per-process retention, so a consumer that
 * keeps up never sees a pause and a stalled one holds at most this much per child.
 */
export const OUTPUT_HIGH_WATER_BYTES: number = 1024 * 1024;

/**
 * Buffered output below which a paused child is resumed. A quarter of the high mark keeps the
 * pause/resume cycle coarse (few syscalls) while the consumer still has data to work on.
 */
export const OUTPUT_LOW_WATER_BYTES: number = 256 * 1024;

/**
 * How long after the child exits its output streams may stay open before they are abandoned.
 * The original's `IO_DRAIN_TIMEOUT_MS` (spec §5.6): long enough for late output, short enough
 * that a daemonised grandchild holding the pipe cannot hang `closed`.
 */
export const DEFAULT_DRAIN_TIMEOUT_MS = 2000;

/** Default terminal width; the original's portable-pty size (spec §5.7). */
export const DEFAULT_PTY_COLS = 80;

/** Default terminal height; the original's portable-pty size (spec §5.7). */
export const DEFAULT_PTY_ROWS = 24;

/**
 * Default time between the polite signal and SIGKILL in `terminate()`. The house default for
 * escalation (style rule 19): enough for a shell to run its traps and HUP its jobs.
 */
export const DEFAULT_TERMINATE_GRACE_MS = 5000;
