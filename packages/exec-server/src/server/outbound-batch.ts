import { notificationMessage, type OutputStream, type RpcMessage } from '@execd/protocol';

/**
 * Most output bytes one connection holds back (and so one `process/outputBatch` frame carries):
 * 256 KiB, 32 chunks of 8 KiB. Large enough that a process streaming flat out costs 4 frames per
 * megabyte instead of 128; small enough that one frame stays well inside a client's event log
 * (execd's keeps 1 MiB / 256 events per process), so a follower that takes each frame's events
 * as they come never falls out of it because of one frame.
 */
export const MAX_OUTPUT_BATCH_BYTES: number = 256 * 1024;

/** One held-back `process/output` notification's params. */
interface HeldOutput {
  readonly processId: string;
  readonly seq: number;
  readonly stream: OutputStream;
  readonly chunk: Uint8Array;
}

function isHeldOutput(params: unknown): params is HeldOutput {
  const p = params as Partial<HeldOutput> | null;
  return (
    typeof p === 'object' &&
    p !== null &&
    typeof p.processId === 'string' &&
    typeof p.seq === 'number' &&
    typeof p.stream === 'string' &&
    p.chunk instanceof Uint8Array
  );
}

/**
 * The `process/output` notifications of one connection that arrived within one turn of the event
 * loop, held back so that each process's run of chunks can travel as one `process/outputBatch`
 * frame (the execd extension a msgpack client asks for in `initialize`). Each process keeps its
 * seq order; a process with a single chunk gets a plain `process/output`. Whoever holds a batch
 * takes it (`take`) before sending anything else, so no other frame overtakes held output.
 */
export class OutboundBatch {
  #held: HeldOutput[] = [];
  #bytes = 0;

  /** Output bytes held. */
  get bytes(): number {
    return this.#bytes;
  }

  get empty(): boolean {
    return this.#held.length === 0;
  }

  /** Holds `message` if it is a `process/output` notification; false (not held) for anything else. */
  hold(message: RpcMessage): boolean {
    if (message.kind !== 'notification' || message.method !== 'process/output') return false;
    if (!isHeldOutput(message.params)) return false;
    this.#held.push(message.params);
    this.#bytes += message.params.chunk.byteLength;
    return true;
  }

  /** The held output as messages (one per process, oldest process first), and empties the batch. */
  take(): RpcMessage[] {
    const held = this.#held;
    this.#held = [];
    this.#bytes = 0;
    if (held.length === 1) return [outputMessage(held[0]!)];
    const byProcess = new Map<string, HeldOutput[]>();
    for (const output of held) {
      const run = byProcess.get(output.processId);
      if (run === undefined) byProcess.set(output.processId, [output]);
      else run.push(output);
    }
    const messages: RpcMessage[] = [];
    for (const [processId, run] of byProcess) {
      if (run.length === 1) {
        messages.push(outputMessage(run[0]!));
        continue;
      }
      messages.push(
        notificationMessage('process/outputBatch', {
          processId,
          chunks: run.map(({ seq, stream, chunk }) => ({ seq, stream, chunk })),
        }),
      );
    }
    return messages;
  }
}

function outputMessage({ processId, seq, stream, chunk }: HeldOutput): RpcMessage {
  return notificationMessage('process/output', { processId, seq, stream, chunk });
}
