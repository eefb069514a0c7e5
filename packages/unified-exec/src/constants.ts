/**
 * Tuning values of unified exec. Every value is the original Codex's (reference spec §4.2);
 * changing one changes what the model sees, so each says why it is what it is.
 */

/** Shortest wait before a tool call yields output: shorter waits return before most commands print. */
export const MIN_YIELD_TIME_MS = 250;

/** Windows floor for the first `exec_command` yield: process start-up there is slow. */
export const WINDOWS_INITIAL_EXEC_YIELD_TIME_FLOOR_MS = 10_000;

/** Shortest wait of an empty `write_stdin` poll, so a polling model does not spin. */
export const MIN_EMPTY_YIELD_TIME_MS = 5_000;

/** Longest wait of `exec_command` and of a non-empty `write_stdin`: keeps the turn responsive. */
export const MAX_YIELD_TIME_MS = 30_000;

/** Default yield of `exec_command` when the model omits `yield_time_ms`. */
export const DEFAULT_EXEC_YIELD_TIME_MS = 10_000;

/** Default yield of `write_stdin` when the model omits `yield_time_ms`. */
export const DEFAULT_WRITE_STDIN_YIELD_TIME_MS = 250;

/**
 * Default longest wait of an empty `write_stdin` poll (config `background_terminal_max_timeout`,
 * itself raised to at least {@link MIN_EMPTY_YIELD_TIME_MS}): lets a model wait on a long build.
 */
export const DEFAULT_MAX_BACKGROUND_TERMINAL_TIMEOUT_MS = 300_000;

/** Output token budget when the model omits `max_output_tokens`. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 10_000;

/** Bytes of output one call retains (half head, half tail): bounds memory per process. */
export const UNIFIED_EXEC_OUTPUT_MAX_BYTES: number = 1024 * 1024;

/** {@link UNIFIED_EXEC_OUTPUT_MAX_BYTES} in approximate tokens (4 bytes per token). */
export const UNIFIED_EXEC_OUTPUT_MAX_TOKENS: number = UNIFIED_EXEC_OUTPUT_MAX_BYTES / 4;

/** Live processes kept per manager before the least recently used one is pruned. */
export const MAX_UNIFIED_EXEC_PROCESSES = 64;

/** Most recently used processes that pruning never evicts. */
export const PRUNE_PROTECTED_RECENT_PROCESSES = 8;

/** A child that exits within this window after spawn is reported as exited in the same call. */
export const EARLY_EXIT_GRACE_PERIOD_MS = 150;

/** After exit, how long output collection waits for the output stream to close. */
export const POST_EXIT_CLOSE_WAIT_CAP_MS = 50;

/** After exit, how long streaming waits for trailing output when no close is observed. */
export const TRAILING_OUTPUT_GRACE_MS = 100;

/** Largest output delta event: keeps UI events small. */
export const UNIFIED_EXEC_OUTPUT_DELTA_MAX_BYTES = 8192;

/** Most output delta events per call; the transcript still keeps everything. */
export const MAX_EXEC_OUTPUT_DELTAS_PER_CALL = 10_000;

/** How long an exited process waits for a late network-denial verdict before reporting its end. */
export const LATE_NETWORK_DENIAL_GRACE_PERIOD_MS = 100;

/** After a successful write to a PTY, wait this long so the echo and the reaction arrive. */
export const TTY_WRITE_SETTLE_MS = 100;

/** The `write_stdin` input that interrupts a pipe (non-tty) process with SIGINT. */
export const INTERRUPT_INPUT = '\u0003';

/** Process ids handed to the model are drawn from [MIN, MAX) in production. */
export const PROCESS_ID_MIN = 1000;

/** Upper bound (exclusive) of randomly drawn process ids. */
export const PROCESS_ID_MAX = 100_000;

/** Hex digits of a chunk id. */
export const CHUNK_ID_LENGTH = 6;
