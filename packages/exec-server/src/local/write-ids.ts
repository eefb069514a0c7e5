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

/**
 * The idempotent `process/write` bookkeeping of one process: each `writeId` is written once. An id
 * already accepted is not written again, and a duplicate arriving while the first is still being
 * written waits for it, never re-writes.
 */
export class IdempotentWrites {
  readonly #accepted: WriteIdSet;
  readonly #pending = new Map<string, Promise<void>>();

  constructor(capacity: number) {
    this.#accepted = new WriteIdSet(capacity);
  }

  /**
   * Runs `write` unless `writeId` was accepted or is being written (then waits for that write);
   * `writeId` is accepted once `write` resolves. Rejects as the (first) write does.
   */
  async once(writeId: string, write: () => Promise<void>): Promise<void> {
    if (this.#accepted.has(writeId)) return;
    const pending = this.#pending.get(writeId);
    if (pending !== undefined) {
      await pending;
      return;
    }
    const writing = write().then(() => this.#accepted.add(writeId));
    this.#pending.set(writeId, writing);
    try {
      await writing;
    } finally {
      this.#pending.delete(writeId);
    }
  }
}
