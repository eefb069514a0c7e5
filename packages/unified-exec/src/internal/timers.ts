/**
 * A wake-up without memory: `wait()` resolves at the next `notify()` or when its timeout passes.
 * One `notify()` releases every current waiter, which then re-checks its condition. A waiter
 * registered synchronously after a check cannot miss a change made later (JavaScript runs one
 * task at a time), which is what output collection relies on.
 */
export class ChangeSignal {
  #waiters = new Set<() => void>();

  /** Wakes every current waiter. */
  notify(): void {
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const wake of waiters) wake();
  }

  /** Pending waiters (leak checks in tests). */
  get waiterCount(): number {
    return this.#waiters.size;
  }

  /** Resolves `true` at the next `notify()`, `false` after `timeoutMs`; leaves no timer behind. */
  wait(timeoutMs: number): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(
        () => {
          this.#waiters.delete(wake);
          resolve(false);
        },
        Math.min(Math.max(0, timeoutMs), MAX_TIMER_MS),
      );
      this.#waiters.add(wake);
    });
  }
}

/** setTimeout fires at once above this, so longer waits are clamped (the caller loops). */
export const MAX_TIMER_MS: number = 2 ** 31 - 1;

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => {
    setTimeout(resolve, Math.max(0, ms));
  });
}

/** Resolves `true` when `promise` settles within `ms`, `false` otherwise; never rejects. */
export function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), Math.max(0, ms));
    const done = (): void => {
      clearTimeout(timer);
      resolve(true);
    };
    promise.then(done, done);
  });
}
