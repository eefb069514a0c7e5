import { setTimeout as delay } from 'node:timers/promises';

/** Options of {@link waitFor}. */
export interface WaitForOptions {
  /** Give up after this long (generous: the machine is slow and shared). Default 30 s. */
  readonly timeoutMs?: number;
  /** Poll interval. Default 20 ms. */
  readonly intervalMs?: number;
  /** Shown in the timeout error. */
  readonly what?: string;
}

/**
 * Polls `probe` until it returns something other than `undefined`/`false` and returns it; throws
 * after the deadline, naming `what`. A bounded wait for a condition, never a bare sleep.
 */
export async function waitFor<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  options: WaitForOptions = {},
): Promise<T> {
  const deadline = performance.now() + (options.timeoutMs ?? 30_000);
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (performance.now() > deadline) {
      throw new Error(`timed out waiting for ${options.what ?? 'a condition'}`, { cause: lastError });
    }
    await delay(options.intervalMs ?? 20);
  }
}
