import type { Logger } from '@execd/exec-server';

/**
 * A typed fan-out: `event(listener)` returns a Disposable; `fire` dispatches over a snapshot of
 * the listeners, and a listener that throws is logged without stopping the others.
 */
export class Emitter<T> {
  readonly #listeners = new Set<(value: T) => void>();
  readonly #logger: Logger | undefined;

  constructor(logger?: Logger) {
    this.#logger = logger;
  }

  /** Live listeners (leak checks). */
  get size(): number {
    return this.#listeners.size;
  }

  /** Adds a listener; disposing the result removes it (idempotent). */
  event(listener: (value: T) => void): Disposable {
    const entry = (value: T): void => listener(value);
    this.#listeners.add(entry);
    return { [Symbol.dispose]: () => void this.#listeners.delete(entry) };
  }

  /** Calls every listener registered at the time of the call. */
  fire(value: T): void {
    for (const listener of [...this.#listeners]) {
      if (!this.#listeners.has(listener)) continue;
      try {
        listener(value);
      } catch (error) {
        this.#logger?.error('unified-exec: event listener threw', { error });
      }
    }
  }

  /** Removes every listener. */
  clear(): void {
    this.#listeners.clear();
  }
}
