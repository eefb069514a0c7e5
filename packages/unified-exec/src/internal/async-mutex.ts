/**
 * A first-come first-served async lock (the original's per-process `Mutex<()>` interaction
 * lock): `lock()` resolves with a release function once every earlier holder has released.
 */
export class AsyncMutex {
  #locked = false;
  readonly #queue: Array<() => void> = [];

  /** True while someone holds the lock (pruning skips such processes). */
  get isLocked(): boolean {
    return this.#locked;
  }

  /** Waits for the lock; call the returned function exactly once to release it (extra calls are ignored). */
  async lock(): Promise<() => void> {
    if (this.#locked) await new Promise<void>((resolve) => this.#queue.push(resolve));
    this.#locked = true;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#queue.shift();
      if (next === undefined) this.#locked = false;
      else next(); // hand over without unlocking, so nobody can jump the queue
    };
  }

  /** Runs `fn` while holding the lock. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    const release = await this.lock();
    try {
      return await fn();
    } finally {
      release();
    }
  }
}
