import type { Logger } from '@execd/protocol';
import type { Environment } from '../environment/environment.ts';
import type { UnifiedExecProcess } from '../process/unified-exec-process.ts';
import type { OutputStreaming } from './output-streaming.ts';
import { type ProcessEntry, ProcessStore } from './process-store.ts';
import type { ExecCommandRequest, ProcessListing } from './requests.ts';

/** What {@link ProcessTable.refresh} found for a process id. */
export type ProcessStatus =
  | { readonly kind: 'alive' }
  | { readonly kind: 'exited'; readonly exitCode: number | undefined }
  | { readonly kind: 'unknown' };

/** Options of a ProcessTable. */
export interface ProcessTableOptions {
  /** `deterministic` ids (1000, 1001, …) for tests; `random` in [1000, 100000) by default. */
  readonly processIds?: 'random' | 'deterministic' | undefined;
  readonly logger: Logger;
}

/**
 * The process manager's session-table bookkeeping: its {@link ProcessStore} (reserved ids, stored
 * processes, pruning) plus the background work tied to those processes (closing released handles,
 * exit watchers), which {@link settle} waits for.
 */
export class ProcessTable {
  readonly #store: ProcessStore;
  readonly #logger: Logger;
  readonly #background = new Set<Promise<unknown>>();

  constructor(options: ProcessTableOptions) {
    this.#store = new ProcessStore({ processIds: options.processIds });
    this.#logger = options.logger;
  }

  /** Stored processes (live, or exited and not yet reported). */
  get size(): number {
    return this.#store.size;
  }

  /** Reserves a fresh process id. */
  allocate(): number {
    return this.#store.allocate();
  }

  /** The stored process with this id. */
  get(processId: number): ProcessEntry | undefined {
    return this.#store.get(processId);
  }

  /** The next recency stamp. */
  touch(): number {
    return this.#store.touch();
  }

  /** Releases an id (and forgets its process, closing it in the background). */
  release(processId: number): void {
    const entry = this.#store.remove(processId);
    if (entry !== undefined) this.track(entry.process.close());
  }

  /**
   * Stores the process of an exec_command (terminating whichever process the store prunes to
   * make room) and starts its exit watcher.
   */
  store(
    process: UnifiedExecProcess,
    request: ExecCommandRequest,
    environment: Environment,
    streaming: OutputStreaming,
  ): void {
    const entry: ProcessEntry = {
      process,
      callId: request.callId,
      processId: request.processId,
      command: request.command,
      hookCommand: request.hookCommand,
      cwd: request.cwd,
      environmentId: environment.id,
      tty: request.tty,
      lastUsed: this.#store.touch(),
    };
    const pruned = this.#store.insert(entry);
    if (pruned !== undefined) {
      this.#logger.debug('unified-exec: pruned a process', { processId: pruned.processId });
      pruned.process.terminate();
      this.track(pruned.process.close());
    }
    // The exit watcher: reports the end once the process exited and its output drained.
    this.track(
      (async () => {
        await streaming.finishAfterExit(process);
        const release = await process.interactionLock.lock();
        try {
          streaming.emitEnd(process.exitCode, process.failureMessage);
        } finally {
          release();
        }
      })(),
    );
  }

  /** Alive → stays; exited → removed (id released, handles closed); missing → unknown. */
  refresh(processId: number): ProcessStatus {
    const entry = this.#store.get(processId);
    if (entry === undefined) return { kind: 'unknown' };
    if (!entry.process.hasExited) return { kind: 'alive' };
    this.#store.remove(processId);
    this.track(entry.process.close());
    return { kind: 'exited', exitCode: entry.process.exitCode };
  }

  /** The stored processes, sorted by id. */
  list(): ProcessListing[] {
    return this.#store.entries().map((entry) => ({
      itemId: entry.callId,
      processId: entry.processId,
      command: entry.hookCommand,
      cwd: entry.cwd,
      environmentId: entry.environmentId,
      tty: entry.tty,
      running: !entry.process.hasExited,
    }));
  }

  /** Kills one stored process and waits for it; false when no such process is stored. */
  async terminate(processId: number): Promise<boolean> {
    const entry = this.#store.get(processId);
    if (entry === undefined) return false;
    if (!(await entry.process.terminateConfirmed())) return false;
    if (this.#store.get(processId) === entry) this.#store.remove(processId);
    await entry.process.close();
    return true;
  }

  /** Kills every stored process (and forgets every reservation), waiting until each is reaped. */
  async terminateAll(): Promise<void> {
    const entries = this.#store.drain();
    await Promise.allSettled(entries.map((entry) => entry.process.close()));
  }

  /** Runs a task in the background: failures are logged, and {@link settle} waits for it. */
  track(task: Promise<unknown>): void {
    const tracked = task.catch((error: unknown) => {
      this.#logger.debug('unified-exec: background task failed', { error });
    });
    this.#background.add(tracked);
    void tracked.finally(() => this.#background.delete(tracked));
  }

  /** Waits until no background task is left (including ones started while waiting). */
  async settle(): Promise<void> {
    while (this.#background.size > 0) await Promise.allSettled([...this.#background]);
  }
}
