import {
  DEFAULT_MAX_BACKGROUND_TERMINAL_TIMEOUT_MS,
  MAX_YIELD_TIME_MS,
  MIN_EMPTY_YIELD_TIME_MS,
  MIN_YIELD_TIME_MS,
  WINDOWS_INITIAL_EXEC_YIELD_TIME_FLOOR_MS,
} from '../constants.ts';

/** Options of {@link clampExecYieldTime}. */
export interface ExecYieldOptions {
  /** Apply the Windows floor of 10 s first. Default: `process.platform === 'win32'`. */
  readonly windows?: boolean;
}

/** The `exec_command` wait: `clamp(y, 250, 30000)`, after `max(y, 10000)` on Windows. */
export function clampExecYieldTime(yieldTimeMs: number, options: ExecYieldOptions = {}): number {
  const windows = options.windows ?? globalThis.process?.platform === 'win32';
  const floored = windows ? Math.max(yieldTimeMs, WINDOWS_INITIAL_EXEC_YIELD_TIME_FLOOR_MS) : yieldTimeMs;
  return Math.min(Math.max(floored, MIN_YIELD_TIME_MS), MAX_YIELD_TIME_MS);
}

/** The longest empty-poll wait a manager allows: the configured value, at least 5000 ms. */
export function resolveMaxWriteStdinYieldTime(
  configuredMs: number = DEFAULT_MAX_BACKGROUND_TERMINAL_TIMEOUT_MS,
): number {
  return Math.max(configuredMs, MIN_EMPTY_YIELD_TIME_MS);
}

/**
 * The `write_stdin` wait: `t = max(y, 250)`; an empty poll waits `clamp(t, 5000, max)`
 * (max 300000 by default), a write `min(t, 30000)`.
 */
export function clampWriteStdinYieldTime(
  yieldTimeMs: number,
  chars: string,
  maxEmptyPollMs: number = DEFAULT_MAX_BACKGROUND_TERMINAL_TIMEOUT_MS,
): number {
  const atLeastMin = Math.max(yieldTimeMs, MIN_YIELD_TIME_MS);
  if (chars.length > 0) return Math.min(atLeastMin, MAX_YIELD_TIME_MS);
  const max = resolveMaxWriteStdinYieldTime(maxEmptyPollMs);
  return Math.min(Math.max(atLeastMin, MIN_EMPTY_YIELD_TIME_MS), max);
}
