import { MAX_EXEC_OUTPUT_DELTAS_PER_CALL, TRAILING_OUTPUT_GRACE_MS } from '../constants.ts';
import { settlesWithin } from '../internal/timers.ts';
import { HeadTailBuffer } from '../output/head-tail-buffer.ts';
import { decodeUtf8Lossy } from '../output/utf8.ts';
import { Utf8DeltaSplitter } from '../output/utf8-stream.ts';
import type { UnifiedExecProcess } from '../process/unified-exec-process.ts';
import type { UnifiedExecEvent } from './events.ts';

/** Identity of the exec_command call whose output is streamed. */
export interface StreamingContext {
  readonly callId: string;
  readonly processId: number;
  readonly command: readonly string[];
  readonly cwd: string;
  /** `performance.now()` when the process was started. */
  readonly startedAt: number;
  readonly emit: (event: UnifiedExecEvent) => void;
}

/**
 * The output of one exec_command as UI events (the original's `start_streaming_output`): every
 * byte goes to a 1 MiB head/tail transcript (for the end event), and UTF-8-aligned deltas of at
 * most 8 KiB go out as `outputDelta` events, at most 10,000 per call.
 */
export class OutputStreaming {
  readonly #context: StreamingContext;
  readonly #transcript = new HeadTailBuffer();
  readonly #splitter = new Utf8DeltaSplitter();
  readonly #subscription: Disposable;
  #deltas = 0;
  #finished = false;
  #ended = false;

  constructor(process: UnifiedExecProcess, context: StreamingContext) {
    this.#context = context;
    this.#subscription = process.onOutput((bytes) => {
      this.#transcript.pushChunk(bytes);
      for (const delta of this.#splitter.push(bytes)) this.#emitDelta(delta);
    });
  }

  #emitDelta(chunk: Uint8Array): void {
    if (this.#deltas >= MAX_EXEC_OUTPUT_DELTAS_PER_CALL) return;
    this.#deltas += 1;
    this.#context.emit({
      type: 'outputDelta',
      callId: this.#context.callId,
      processId: this.#context.processId,
      chunk,
    });
  }

  /** Stops streaming and flushes an incomplete trailing character. Idempotent. */
  finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#subscription[Symbol.dispose]();
    for (const delta of this.#splitter.finish()) this.#emitDelta(delta);
  }

  /** Finishes once the process's output closed, or {@link TRAILING_OUTPUT_GRACE_MS} after its exit. */
  async finishAfterExit(process: UnifiedExecProcess): Promise<void> {
    await process.exited;
    await settlesWithin(process.closed, TRAILING_OUTPUT_GRACE_MS);
    this.finish();
  }

  /** Emits the one `end` event of this call (later calls are ignored). */
  emitEnd(exitCode: number | undefined, failure: string | undefined): void {
    if (this.#ended) return;
    this.#ended = true;
    this.finish();
    let aggregatedOutput = decodeUtf8Lossy(this.#transcript.toBytesWithOmissionMarker());
    if (failure !== undefined) aggregatedOutput = `${aggregatedOutput}\n${failure}`;
    this.#context.emit({
      type: 'end',
      callId: this.#context.callId,
      processId: this.#context.processId,
      command: this.#context.command,
      cwd: this.#context.cwd,
      exitCode: failure === undefined ? (exitCode ?? -1) : -1,
      aggregatedOutput,
      durationMs: performance.now() - this.#context.startedAt,
      status: failure === undefined ? 'completed' : 'failed',
    });
  }
}
