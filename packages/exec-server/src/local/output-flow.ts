/**
 * The flow switch of one process table: while paused, its processes' output pumps stop taking
 * chunks from their children (whose pipes then fill, so the children block in `write`), and an
 * exit waits to be announced until the output before it has been taken. Nothing is dropped and
 * no seq changes: the output simply arrives later. Once closed it flows for good (shutdown must
 * drain every child).
 *
 * ```
 *  flowing ──pause──> paused ──resume──> flowing
 *     └──────────── close (from either) ───────> closed (always flowing)
 * ```
 */
export class OutputFlow {
  #paused = false;
  #closed = false;
  #waiters: (() => void)[] = [];

  /** True while output must not be taken. */
  get paused(): boolean {
    return this.#paused;
  }

  /** Pauses (`true`) or resumes (`false`); resuming wakes every waiter. Ignored once closed. */
  setPaused(paused: boolean): void {
    if (this.#closed || paused === this.#paused) return;
    this.#paused = paused;
    if (!paused) this.#wakeAll();
  }

  /** Resolves at once while flowing, else at the next resume (or close). */
  whenFlowing(): Promise<void> {
    if (!this.#paused) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Resumes for good: later pauses are ignored. Idempotent. */
  close(): void {
    this.#closed = true;
    this.#paused = false;
    this.#wakeAll();
  }

  #wakeAll(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}

/**
 * Called once a child exited: lets output written just before the exit take its seq first (see
 * EXIT_OUTPUT_GRACE_MS), waiting until `outputDone` settles or `graceMs` passes. While the flow
 * is paused the output before the exit is still in the pipe: the grace starts over once it flows
 * again, so a paused process's exit still follows its output.
 */
export async function awaitOutputBeforeExit(
  flow: OutputFlow,
  outputDone: Promise<void>,
  graceMs: number,
): Promise<void> {
  let outputEnded = false;
  void outputDone.then(() => {
    outputEnded = true;
  });
  do {
    await flow.whenFlowing();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      outputDone,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, graceMs);
      }),
    ]);
    clearTimeout(timer);
  } while (flow.paused && !outputEnded);
}
