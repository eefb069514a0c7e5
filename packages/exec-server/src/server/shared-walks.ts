// One expensive look at the system answering every question asked while it was not yet started.
// Attributing a connection reads /proc/net/tcp and walks every process's descriptors: per
// connection, a burst of 200 connections cost the server seconds of CPU. Questions asked while a
// walk runs wait for the next one, which starts after they were asked: what they ask about (a
// socket just accepted) existed before it looked.

/** One question in a walk. */
export interface WalkQuestion<Q, A> {
  readonly query: Q;
  /** True once answered, or once its asker gave up (its signal aborted). */
  readonly settled: boolean;
  answer(value: A): void;
}

/** A walk's questions by what they ask (several connections may ask about the same socket). */
export function byQuery<Q, A>(questions: readonly WalkQuestion<Q, A>[]): Map<Q, WalkQuestion<Q, A>[]> {
  const grouped = new Map<Q, WalkQuestion<Q, A>[]>();
  for (const question of questions) {
    const same = grouped.get(question.query);
    if (same === undefined) grouped.set(question.query, [question]);
    else same.push(question);
  }
  return grouped;
}

/** Runs walks of `walk` over batches of questions; see the file's head. */
export class SharedWalks<Q, A> {
  readonly #walk: (questions: readonly WalkQuestion<Q, A>[]) => Promise<void>;
  readonly #unanswered: A;
  #queued: Question<Q, A>[] = [];
  #walking = false;

  /**
   * `walk` answers what it can and returns once there is nothing left to learn (it should stop
   * early once every question is settled); the questions it left unanswered get `unanswered`.
   * If it throws, each unanswered question rejects with that error.
   */
  constructor(walk: (questions: readonly WalkQuestion<Q, A>[]) => Promise<void>, unanswered: A) {
    this.#walk = walk;
    this.#unanswered = unanswered;
  }

  /** Asks `query` in the next walk. Rejects only when `signal` aborts or the walk fails. */
  ask(query: Q, signal: AbortSignal): Promise<A> {
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise<A>((resolve, reject) => {
      const question = new Question<Q, A>(query, signal, resolve, reject);
      this.#queued.push(question);
      if (this.#walking) return;
      // Starts at the end of this turn: the connections accepted in the same turn share it.
      this.#walking = true;
      setImmediate(() => void this.#drain());
    });
  }

  async #drain(): Promise<void> {
    try {
      while (this.#queued.length > 0) {
        const batch = this.#queued.filter((question) => !question.settled);
        this.#queued = [];
        if (batch.length === 0) continue;
        let failure: { error: unknown } | undefined;
        try {
          // A walk stuck on /proc holds up no later one once all its askers have given up.
          await Promise.race([this.#walk(batch), Promise.all(batch.map((question) => question.finished))]);
        } catch (error) {
          failure = { error };
        }
        for (const question of batch) {
          if (failure === undefined) question.answer(this.#unanswered);
          else question.fail(failure.error);
        }
      }
    } finally {
      this.#walking = false;
    }
  }
}

class Question<Q, A> implements WalkQuestion<Q, A> {
  readonly query: Q;
  readonly #signal: AbortSignal;
  readonly #resolve: (value: A) => void;
  readonly #reject: (error: unknown) => void;
  /** Resolves once the question is answered, failed or given up. */
  readonly finished: Promise<void>;
  #markFinished!: () => void;
  #done = false;

  constructor(query: Q, signal: AbortSignal, resolve: (value: A) => void, reject: (error: unknown) => void) {
    this.query = query;
    this.#signal = signal;
    this.#resolve = resolve;
    this.#reject = reject;
    this.finished = new Promise<void>((done) => {
      this.#markFinished = done;
    });
    signal.addEventListener('abort', this.#onAbort, { once: true });
  }

  get settled(): boolean {
    return this.#done || this.#signal.aborted;
  }

  answer(value: A): void {
    if (this.#finish()) this.#resolve(value);
  }

  fail(error: unknown): void {
    if (this.#finish()) this.#reject(error);
  }

  readonly #onAbort = (): void => {
    if (this.#finish()) this.#reject(this.#signal.reason);
  };

  #finish(): boolean {
    if (this.#done) return false;
    this.#done = true;
    this.#signal.removeEventListener('abort', this.#onAbort);
    this.#markFinished();
    return true;
  }
}
