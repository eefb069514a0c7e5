import { Emitter, type Logger } from '@execd/protocol';
import type { NetworkDenial } from '@execd/protocol/contract';
import type { NetworkDecisionRecord } from '../records.ts';

/**
 * How many decisions and denials a proxy keeps for `decisions()` / `denials()`. A command that
 * makes many plain-HTTP requests records one decision each; 1000 keeps the recent history
 * useful while bounding memory (live listeners see every one).
 */
export const DECISION_LOG_MAX_ENTRIES = 1000;

/** Retained, bounded history of decisions and denials plus live fan-out. */
export class DecisionLog {
  readonly #decisions: NetworkDecisionRecord[] = [];
  readonly #denials: NetworkDenial[] = [];
  readonly #onDecision: Emitter<NetworkDecisionRecord>;
  readonly #onDenial: Emitter<NetworkDenial>;
  readonly #onClose: Emitter<void>;
  #closed = false;
  #decisionCount = 0;
  #denialCount = 0;

  constructor(logger: Logger) {
    this.#onDecision = new Emitter(logger);
    this.#onDenial = new Emitter(logger);
    this.#onClose = new Emitter(logger);
  }

  /** Records an allow decision. */
  allow(record: NetworkDecisionRecord): void {
    this.#push(this.#decisions, record);
    this.#decisionCount++;
    this.#onDecision.fire(record);
  }

  /** Records a deny decision and its denial. */
  deny(record: NetworkDecisionRecord, denial: NetworkDenial): void {
    this.#push(this.#decisions, record);
    this.#push(this.#denials, denial);
    this.#decisionCount++;
    this.#denialCount++;
    this.#onDecision.fire(record);
    this.#onDenial.fire(denial);
  }

  #push<T>(list: T[], item: T): void {
    list.push(item);
    if (list.length > DECISION_LOG_MAX_ENTRIES) list.splice(0, list.length - DECISION_LOG_MAX_ENTRIES);
  }

  get decisions(): readonly NetworkDecisionRecord[] {
    return [...this.#decisions];
  }

  get denials(): readonly NetworkDenial[] {
    return [...this.#denials];
  }

  get counts(): { readonly decisions: number; readonly denials: number } {
    return { decisions: this.#decisionCount, denials: this.#denialCount };
  }

  onDecision(listener: (record: NetworkDecisionRecord) => void): Disposable {
    return this.#onDecision.event(listener);
  }

  onDenial(listener: (denial: NetworkDenial) => void): Disposable {
    return this.#onDenial.event(listener);
  }

  /** Live denials from now on; ends when the log closes or `cancelSignal` aborts. */
  async *watchDenials(cancelSignal?: AbortSignal): AsyncGenerator<NetworkDenial> {
    if (this.#closed || cancelSignal?.aborted) return;
    const queue: NetworkDenial[] = [];
    let wake: (() => void) | undefined;
    let done = false;
    const finish = (): void => {
      done = true;
      wake?.();
    };
    using _denials = this.#onDenial.event((denial) => {
      queue.push(denial);
      wake?.();
    });
    using _closed = this.#onClose.event(finish);
    cancelSignal?.addEventListener('abort', finish, { once: true });
    try {
      for (;;) {
        const next = queue.shift();
        if (next !== undefined) {
          yield next;
          continue;
        }
        if (done) return;
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
      }
    } finally {
      cancelSignal?.removeEventListener('abort', finish);
    }
  }

  /** Ends every live iterator and drops listeners. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#onClose.fire();
    this.#onDecision.clear();
    this.#onDenial.clear();
    this.#onClose.clear();
  }

  /** Live listener count (for leak checks). */
  get listenerCount(): number {
    return this.#onDecision.size + this.#onDenial.size + this.#onClose.size;
  }
}
