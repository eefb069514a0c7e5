import { OutputGapError, type ReadResponse } from '@execd/protocol';
import type { SequencedEvent } from '@execd/protocol/contract';

/** What {@link replayFromServer} needs. */
export interface ServerReplay {
  /** `process/read {afterSeq, maxBytes: page, waitMs: 0}`. */
  readonly read: (afterSeq: number) => Promise<ReadResponse>;
  /** First seq the client's log still holds: the replay stops before it. */
  readonly stopBefore: number;
  /** The client's log holds the `exited` event (so no hole below `stopBefore` can be it). */
  readonly exitInLog: boolean;
}

/**
 * Replays the events after `cursor` that the client's bounded log no longer holds, from the
 * server's retention, page by page, up to `stopBefore`. A hole that only the exit can fill gets
 * the exit (the server reports exits as flags, not as chunks); any other hole is output the
 * server evicted too, reported as an `OutputGapError`. Ends early (without an error) when the
 * server answered with a `failure` (the session failed; the caller reports it).
 */
export async function* replayFromServer(
  cursor: number,
  replay: ServerReplay,
): AsyncGenerator<SequencedEvent> {
  let next = cursor + 1;
  let exitYielded = replay.exitInLog;
  const hole = (response: ReadResponse, upTo: number): SequencedEvent => {
    if (upTo - next === 1 && response.exited && !exitYielded) {
      exitYielded = true;
      return {
        type: 'exited',
        seq: next,
        exitCode: response.exitCode ?? -1,
        sandboxDenied: response.sandboxDenied,
      };
    }
    throw new OutputGapError(response.firstRetainedSeq ?? upTo);
  };
  while (next < replay.stopBefore) {
    const response = await replay.read(next - 1);
    if (response.failure !== null) return;
    if (response.firstRetainedSeq !== undefined && response.firstRetainedSeq > next) {
      throw new OutputGapError(response.firstRetainedSeq);
    }
    const chunks = response.chunks.filter((chunk) => chunk.seq >= next && chunk.seq < replay.stopBefore);
    if (chunks.length === 0) {
      const event = hole(response, replay.stopBefore);
      next = event.seq + 1;
      yield event;
      continue;
    }
    for (const chunk of chunks) {
      if (chunk.seq > next) {
        const event = hole(response, chunk.seq);
        next = event.seq + 1;
        yield event;
      }
      next = chunk.seq + 1;
      yield { type: 'output', seq: chunk.seq, stream: chunk.stream, chunk: chunk.chunk };
    }
  }
}
