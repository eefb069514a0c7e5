import { ExecError, type SandboxType } from '@execd/protocol';
import type { ExecProcess, ExecProcessEvent } from '@execd/protocol/contract';
import { UnifiedExecError } from '../errors.ts';
import type { ProcessDriver, ProcessSink } from './process-driver.ts';

/** Failure text when an exec-server event stream ends before the process closed (as the original). */
export const EVENT_STREAM_CLOSED_MESSAGE = 'exec-server process event stream closed';

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * A process of an exec-server backend (the in-process `LocalBackend` used for shell snapshots,
 * or a remote server through the client), following spec §4.8: pushed events are the fast path;
 * a `read(afterSeq = lastSeq)` recovers when the stream lagged, a seq was skipped, or an exit
 * arrives without `sandboxDenied` (a legacy server). Events at or below `lastSeq` are ignored.
 */
export class ExecServerDriver implements ProcessDriver {
  readonly sandboxType: SandboxType;
  readonly backendProcessId: string;
  readonly #process: ExecProcess;
  readonly #stop = new AbortController();
  #sink: ProcessSink | undefined;
  #closed = false;
  /** Seq of the last event handed to the sink. */
  #delivered = 0;
  /** A wait reported after output this driver has not delivered yet (seq), told once it is. */
  #pendingWaitSeq: number | undefined;
  #inputWait: Disposable | undefined;
  #closing: Promise<void> | undefined;

  constructor(process: ExecProcess) {
    this.#process = process;
    this.backendProcessId = process.processId;
    // A legacy peer does not report the sandbox: treated as none (executor verdicts still count).
    this.sandboxType = process.sandboxType ?? 'none';
  }

  get reportsInputWait(): boolean {
    return this.#inputWait !== undefined;
  }

  attach(sink: ProcessSink): void {
    this.#sink = sink;
    this.#inputWait = this.#process.onWaitingForInput?.((afterSeq) => this.#onWaiting(sink, afterSeq));
    void this.#pump(sink);
  }

  /** A wait report is only true for the output up to `afterSeq`: later output ends it. */
  #onWaiting(sink: ProcessSink, afterSeq: number): void {
    if (afterSeq < this.#delivered) return;
    if (afterSeq > this.#delivered) {
      this.#pendingWaitSeq = afterSeq;
      return;
    }
    this.#pendingWaitSeq = undefined;
    sink.waitingForInput();
  }

  #advance(sink: ProcessSink, seq: number): void {
    this.#delivered = Math.max(this.#delivered, seq);
    const pending = this.#pendingWaitSeq;
    if (pending === undefined || pending > this.#delivered) return;
    this.#pendingWaitSeq = undefined;
    // Output after the reported wait ended it.
    if (pending === this.#delivered) sink.waitingForInput();
  }

  async #pump(sink: ProcessSink): Promise<void> {
    let lastSeq = 0;
    let first = true;
    for (;;) {
      let recover = false;
      try {
        const events = this.#process.events({
          ...(first ? {} : { afterSeq: lastSeq }),
          cancelSignal: this.#stop.signal,
        });
        first = false;
        for await (const event of events) {
          if (event.type === 'failed') return sink.failed(event.message);
          if (event.seq <= lastSeq) continue;
          if (event.seq > lastSeq + 1 || (event.type === 'exited' && event.sandboxDenied === undefined)) {
            recover = true;
            break;
          }
          lastSeq = event.seq;
          if (this.#deliver(sink, event)) return;
        }
        if (!recover) {
          if (!this.#stop.signal.aborted) sink.failed(EVENT_STREAM_CLOSED_MESSAGE);
          return;
        }
      } catch (error) {
        if (this.#stop.signal.aborted) return;
        // A follower that fell behind retention recovers through a read; anything else is fatal.
        if (!(ExecError.is(error) && error.code === 'outputGap')) return sink.failed(describe(error));
      }
      const recovered = await this.#recover(sink, lastSeq);
      if (recovered === undefined) return;
      lastSeq = recovered;
    }
  }

  /** Applies one in-order event; true once the process is closed. */
  #deliver(sink: ProcessSink, event: Exclude<ExecProcessEvent, { type: 'failed' }>): boolean {
    switch (event.type) {
      case 'output':
        sink.output(event.chunk);
        this.#advance(sink, event.seq);
        return false;
      case 'exited':
        sink.exited(event.exitCode, event.sandboxDenied === true);
        return false;
      case 'closed':
        this.#closed = true;
        sink.closed();
        return true;
    }
  }

  /** One recovery read; the new `lastSeq`, or undefined when following must stop. */
  async #recover(sink: ProcessSink, lastSeq: number): Promise<number | undefined> {
    let response: Awaited<ReturnType<ExecProcess['read']>>;
    try {
      response = await this.#process.read({ afterSeq: lastSeq, waitMs: 0 });
    } catch (error) {
      if (!this.#stop.signal.aborted) sink.failed(describe(error));
      return undefined;
    }
    for (const chunk of response.chunks) {
      if (chunk.seq > lastSeq) sink.output(chunk.chunk);
    }
    const next = Math.max(lastSeq, response.nextSeq - 1);
    this.#advance(sink, next);
    if (response.failure !== null) {
      sink.failed(response.failure);
      return undefined;
    }
    if (response.exited) sink.exited(response.exitCode ?? undefined, response.sandboxDenied);
    if (response.closed) {
      this.#closed = true;
      sink.closed();
      return undefined;
    }
    return next;
  }

  async write(bytes: Uint8Array): Promise<void> {
    this.#pendingWaitSeq = undefined;
    let status: string;
    try {
      status = (await this.#process.write(bytes)).status;
    } catch (error) {
      throw UnifiedExecError.processFailed(describe(error));
    }
    if (status === 'accepted') return;
    if (status === 'unknownProcess' || status === 'stdinClosed') this.#sink?.exited(undefined);
    throw UnifiedExecError.writeToStdin();
  }

  async interrupt(): Promise<void> {
    await this.#process.interrupt();
  }

  async terminate(): Promise<boolean> {
    await this.#process.terminate();
    return true;
  }

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.#stop.abort();
    this.#inputWait?.[Symbol.dispose]();
    // Dropping a unified-exec process terminates it (as the original); a closed one is gone already.
    if (!this.#closed) await this.#process.terminate().catch(() => undefined);
    await this.#process.close().catch(() => undefined);
  }
}
