/**
 * A level-free wake-up for long-polls: `wait()` resolves at the next `notify()`, or when the
 * deadline passes, or when `cancelSignal` aborts (then it rejects with the signal's reason).
 * Every waiter is released by one `notify()`; a waiter re-checks its condition afterwards.
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
   * Resolves `true` at the next `notify()`, `false` once `timeoutMs` has passed. Rejects with the
   * abort reason if `cancelSignal` aborts first. Leaves no timer or listener behind.
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
      const timer = setTimeout(() => finish(() => resolve(false)), Math.max(0, timeoutMs));
      this.#waiters.add(wake);
      cancelSignal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
