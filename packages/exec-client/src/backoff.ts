/** Shape of the reconnect schedule. */
export interface BackoffOptions {
  /** Pause before the second attempt (the first is immediate). */
  readonly initialMs: number;
  /** The pause never grows beyond this. */
  readonly maxMs: number;
  /** Fraction of the pause drawn at random (0 = none, 0.2 = ±20 %), so clients do not reconnect in step. */
  readonly jitter?: number;
  /** Source of randomness in [0, 1) (tests pass a fixed one). */
  readonly random?: () => number;
}

/**
 * Pause before reconnect attempt `attempt` (0-based): 0 for the first, then `initialMs`
 * doubling up to `maxMs`, with optional jitter. Pure, so it is tested without timers.
 */
export function reconnectDelayMs(attempt: number, options: BackoffOptions): number {
  if (attempt <= 0) return 0;
  const base = Math.min(options.maxMs, options.initialMs * 2 ** Math.min(attempt - 1, 30));
  const jitter = options.jitter ?? 0;
  if (jitter <= 0) return base;
  const random = options.random ?? Math.random;
  const factor = 1 - jitter + 2 * jitter * random();
  return Math.max(0, Math.min(options.maxMs, Math.round(base * factor)));
}
