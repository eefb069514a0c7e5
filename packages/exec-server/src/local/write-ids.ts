/**
 * The `writeId`s already accepted for one process: a bounded set that forgets the oldest id first,
 * so a write retried after a reconnect is not written twice.
 */
export class WriteIdSet {
  readonly #capacity: number;
  // A Set iterates in insertion order, which makes it a FIFO for free.
  readonly #ids = new Set<string>();

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  has(writeId: string): boolean {
    return this.#ids.has(writeId);
  }

  /** Remembers `writeId`, forgetting the oldest beyond capacity. */
  add(writeId: string): void {
    if (this.#ids.has(writeId)) return;
    this.#ids.add(writeId);
    if (this.#ids.size > this.#capacity) {
      const oldest = this.#ids.values().next().value;
      if (oldest !== undefined) this.#ids.delete(oldest);
    }
  }

  get size(): number {
    return this.#ids.size;
  }
}
