/** setTimeout fires at once above this, so longer waits are clamped (the caller re-checks and loops). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A wake-up without memory for long-polls: `wait()` resolves at the next `notify()`, or when its
 * timeout passes, or when `cancelSignal` aborts (then it rejects with the signal's reason). One
 * `notify()` releases every current waiter, which then re-checks its condition. A waiter
 * registered synchronously after a check cannot miss a change made later (JavaScript runs one task
 * at a time), which is what output collection relies on.
 */
export class ChangeSignal {
  #waiters = new Set<() => void>();

  /** Wakes every current waiter. */
  notify(): void {
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const wake of waiters) wake();
  }

  /** Number of pending waiters (for leak checks in tests). */
  get waiterCount(): number {
    return this.#waiters.size;
  }

  /**
   * Resolves `true` at the next `notify()`, `false` once `timeoutMs` has passed (clamped to
   * setTimeout's largest delay, about 24.8 days). Rejects with the abort reason if `cancelSignal`
   * aborts first. Leaves no timer or listener behind.
   */
  wait(timeoutMs: number, cancelSignal?: AbortSignal): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      if (cancelSignal?.aborted) {
        reject(cancelSignal.reason);
        return;
      }
      const finish = (outcome: () => void): void => {
        clearTimeout(timer);
        this.#waiters.delete(wake);
        cancelSignal?.removeEventListener('abort', onAbort);
        outcome();
      };
      const wake = (): void => finish(() => resolve(true));
      const onAbort = (): void => finish(() => reject(cancelSignal?.reason));
      const timer = setTimeout(
        () => finish(() => resolve(false)),
        Math.min(Math.max(0, timeoutMs), MAX_TIMER_MS),
      );
      this.#waiters.add(wake);
      cancelSignal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
