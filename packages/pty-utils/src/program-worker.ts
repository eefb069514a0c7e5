import { type ResourceLimits, Worker } from 'node:worker_threads';

/** Options of a {@link ProgramWorker}. */
export interface ProgramWorkerOptions {
  /**
   * The thread's whole program, as text (`eval`): a self-contained function's `toString()` called
   * with the modules it needs (`process.getBuiltinModule`), so that it runs the same from sources
   * and from a bundle, as a script or as a module. It answers each request, posted to its
   * `parentPort`, with one message carrying the request's `id`.
   */
  readonly source: string;
  /** What the thread is, for errors ("the folder-scan worker"). */
  readonly what: string;
  /** A thread with nothing to do ends after this long; the next request starts another. */
  readonly idleMs: number;
  readonly resourceLimits?: ResourceLimits | undefined;
}

interface Pending<Reply> {
  resolve(reply: Reply): void;
  reject(error: Error): void;
}

/** One thread: started by the first request after the last one ended. */
class Thread<Request, Reply extends { readonly id: number }> {
  readonly #worker: Worker;
  readonly #pending = new Map<number, Pending<Reply>>();
  readonly #options: ProgramWorkerOptions;
  readonly #onEnd: () => void;
  #idle: NodeJS.Timeout | undefined;
  #ended = false;

  constructor(options: ProgramWorkerOptions, onEnd: () => void) {
    this.#options = options;
    this.#onEnd = onEnd;
    this.#worker = new Worker(options.source, {
      eval: true,
      ...(options.resourceLimits === undefined ? {} : { resourceLimits: options.resourceLimits }),
      stdout: true,
      stderr: true,
    });
    // Never what keeps this process alive.
    this.#worker.unref();
    this.#worker.on('message', (reply: Reply) => {
      const pending = this.#pending.get(reply.id);
      this.#pending.delete(reply.id);
      pending?.resolve(reply);
      this.#armIdle();
    });
    this.#worker.on('error', (error) => this.#end(error));
    this.#worker.on('exit', (code) => this.#end(new Error(`${options.what} exited (code ${code})`)));
  }

  ask(id: number, request: Request): Promise<Reply> {
    clearTimeout(this.#idle);
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#worker.postMessage(request);
    });
  }

  end(): Promise<void> {
    this.#end(new Error(`${this.#options.what} was ended`));
    return this.#worker.terminate().then(() => undefined);
  }

  #armIdle(): void {
    if (this.#pending.size > 0) return;
    clearTimeout(this.#idle);
    this.#idle = setTimeout(() => void this.end(), this.#options.idleMs);
    this.#idle.unref();
  }

  #end(error: Error): void {
    if (this.#ended) return;
    this.#ended = true;
    clearTimeout(this.#idle);
    this.#onEnd();
    for (const pending of this.#pending.values()) pending.reject(error);
    this.#pending.clear();
  }
}

/**
 * A worker thread for synchronous work kept off the event loop (sandboxing's folder scan):
 * started by the first request, ended when idle for `idleMs` or when it fails (its pending
 * requests reject), started afresh by the next request. It never keeps the process alive.
 */
export class ProgramWorker<Request extends { readonly id: number }, Reply extends { readonly id: number }> {
  readonly #options: ProgramWorkerOptions;
  #thread: Thread<Request, Reply> | undefined;

  constructor(options: ProgramWorkerOptions) {
    this.#options = options;
  }

  /** True while a thread runs. */
  get running(): boolean {
    return this.#thread !== undefined;
  }

  /** Posts `request` and resolves with the reply of the same `id` (ids are the caller's). */
  ask(request: Request): Promise<Reply> {
    if (this.#thread === undefined) {
      const started: Thread<Request, Reply> = new Thread(this.#options, () => {
        if (this.#thread === started) this.#thread = undefined;
      });
      this.#thread = started;
    }
    return this.#thread.ask(request.id, request);
  }

  /** Ends the running thread now, if any (its pending requests reject); idempotent. */
  async end(): Promise<void> {
    await this.#thread?.end();
  }
}
