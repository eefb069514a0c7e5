import type { Logger } from './logger.ts';

/**
 * A typed fan-out: `event(listener)` returns a Disposable; `fire` dispatches over a snapshot, so a
 * listener may subscribe from inside a callback (new listeners see the next value) or unsubscribe
 * (removed listeners are not called again). A throwing listener is logged and
 * does not stop the others.
 */
export class Emitter<T> {
  #listeners = new Set<(value: T) => void>();
  readonly #logger: Logger | undefined;

  constructor(logger?: Logger) {
    this.#logger = logger;
  }

  /** Number of live listeners (for leak checks). */
  get size(): number {
    return this.#listeners.size;
  }

  /** Adds a listener; disposing the result removes it (idempotent). */
  event(listener: (value: T) => void): Disposable {
    // Wrap so the same function may be added twice and removed independently.
    const entry = (value: T): void => listener(value);
    this.#listeners.add(entry);
    return { [Symbol.dispose]: () => void this.#listeners.delete(entry) };
  }

  /** Calls every listener registered at the time of the call. */
  fire(value: T): void {
    for (const listener of [...this.#listeners]) {
      // Skip listeners removed by an earlier listener during this dispatch.
      if (!this.#listeners.has(listener)) continue;
      try {
        listener(value);
      } catch (error) {
        this.#logger?.error('listener threw', { error });
      }
    }
  }

  /** Removes every listener. */
  clear(): void {
    this.#listeners.clear();
  }
}
