// Tuning values of the snapshot cache; each one says why it has the value it has.

/**
 * Distinct snapshots kept in memory (LRU). One per (scope, shell, cwd, policy, sandbox, rc files):
 * a session rarely uses more than a handful, and each one can hold up to 512 KiB.
 */
export const MAX_CACHED_SNAPSHOTS = 16;

/**
 * Cap on the capture's stdout (state plus environment), as the original. Bigger output means a
 * runaway profile; the command then runs without a snapshot rather than carrying megabytes per launch.
 */
export const MAX_SNAPSHOT_BYTES: number = 512 * 1024;

/**
 * Largest single `__CODEX_SHELL_SNAPSHOT_STATE_i` value. Linux refuses any one environment string
 * over 128 KiB (MAX_ARG_STRLEN) with E2BIG; 60 KiB leaves room on every platform, as the original.
 */
export const MAX_SNAPSHOT_ENV_VALUE_BYTES: number = 60 * 1024;

/** Longest accepted `scopeId`, in UTF-8 bytes (the original's limit; ids are `{thread}:{environment}`). */
export const MAX_SNAPSHOT_SCOPE_BYTES = 256;

/** A capture that takes longer is killed (whole process group) and counts as failed, as the original. */
export const SNAPSHOT_TIMEOUT_MS = 10_000;

/**
 * After the capture shell exits, how long to wait for its stdout to close. A profile that leaves a
 * background job holding stdout must not stall every command until the 10 s timeout.
 */
export const SNAPSHOT_DRAIN_AFTER_EXIT_MS = 1_000;

/**
 * First wait before a failed capture is tried again. Until then commands run unmodified and the
 * profile's side effects do not repeat; the original waits 1 s too.
 */
export const SNAPSHOT_RETRY_BACKOFF_MS = 1_000;

/**
 * Longest wait between two failed captures (the backoff doubles up to this). Five minutes: a
 * broken profile runs at most a dozen times an hour, yet a transient failure heals on its own.
 */
export const SNAPSHOT_MAX_RETRY_BACKOFF_MS: number = 5 * 60_000;
