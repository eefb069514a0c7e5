import { ExecError, type ReadResponse } from '@execd/protocol';
import type { SequencedEvent } from '@execd/protocol/contract';

/** What {@link planReadMerge} needs to know of one process's ordered stream. */
export interface MergeState {
  readonly processId: string;
  /** Seq of the last event handed to consumers. */
  readonly lastPublished: number;
  /** Events held back by the reorder buffer (all with seq > lastPublished). */
  readonly pending: ReadonlyMap<number, SequencedEvent>;
  /** An `exited` event was published or is pending. */
  readonly exitSeen: boolean;
}

/** How to fold one `process/read` answer into the stream. */
export interface MergePlan {
  /** Events to put into the reorder buffer (an `exited` may replace a pending one). */
  readonly events: SequencedEvent[];
  /**
   * Set when output after `lastPublished` is gone from the server's retention: the stream jumps to
   * `firstRetainedSeq - 1` and consumers are told with an OutputGapError.
   */
  readonly firstRetainedSeq?: number;
}

function lost(target: number): ExecError {
  return new ExecError(
    'protocol',
    `process events are no longer retained while recovering through sequence ${target}`,
  );
}

/**
 * Plans the merge of a `process/read {afterSeq: lastPublished, maxBytes: null}` answer into an
 * ordered event stream (the original's `recover_events`, spec §3.5). Every seq up to
 * `nextSeq - 1` must end up accounted for: output chunks fill their seqs, `closed` takes the last
 * one, and an exit the client never saw takes the one remaining hole (exactly one is allowed).
 *
 * Lost output is reported, never hidden: execd servers say `firstRetainedSeq`; for an original
 * server a missing prefix before the first returned chunk that nothing else explains is read the
 * same way. Anything else that does not add up throws a `protocol` ExecError.
 */
export function planReadMerge(state: MergeState, response: ReadResponse): MergePlan {
  const last = state.lastPublished;
  const target = response.nextSeq - 1;
  const known = new Map<number, SequencedEvent>();
  for (const [seq, event] of state.pending) if (seq > last) known.set(seq, event);
  const events: SequencedEvent[] = [];
  let firstChunk: number | undefined;
  for (const chunk of response.chunks) {
    if (chunk.seq > target) {
      throw new ExecError(
        'protocol',
        `process ${state.processId}: output at seq ${chunk.seq} is beyond nextSeq ${response.nextSeq}`,
      );
    }
    if (chunk.seq <= last) continue;
    firstChunk ??= chunk.seq;
    const existing = known.get(chunk.seq);
    if (existing !== undefined && existing.type !== 'output') {
      throw new ExecError(
        'protocol',
        `process ${state.processId}: output at the seq of its ${existing.type} event`,
      );
    }
    if (existing !== undefined) continue;
    const event: SequencedEvent = {
      type: 'output',
      seq: chunk.seq,
      stream: chunk.stream,
      chunk: chunk.chunk,
    };
    known.set(chunk.seq, event);
    events.push(event);
  }
  if (response.closed && target > last) {
    const existing = known.get(target);
    if (existing?.type === 'output' || existing?.type === 'exited') {
      throw new ExecError(
        'protocol',
        `process ${state.processId}: ${existing.type} at its closed sequence ${target}`,
      );
    }
    if (existing === undefined) {
      const closed: SequencedEvent = { type: 'closed', seq: target };
      known.set(target, closed);
      events.push(closed);
    }
  }

  const needExit = response.exited && !state.exitSeen;
  let firstRetained =
    response.firstRetainedSeq !== undefined && response.firstRetainedSeq > last + 1
      ? response.firstRetainedSeq
      : undefined;
  if (firstRetained === undefined && firstChunk !== undefined && firstChunk > last + 1) {
    // An original server evicts silently: holes before the first returned chunk that no exit
    // explains can only be evicted output.
    const prefixHoles = firstChunk - last - 1 - countKnown(known, last + 1, firstChunk - 1);
    const excess = prefixHoles + holes(known, firstChunk, target).length - (needExit ? 1 : 0);
    if (excess > 0 && prefixHoles >= excess) firstRetained = firstChunk;
  }
  let rest = holes(known, firstRetained ?? last + 1, target);
  if (needExit) {
    let exitSeq: number | undefined;
    if (rest.length === 1) exitSeq = rest[0];
    else if (rest.length === 0 && firstRetained !== undefined) {
      // The exit fell inside the evicted range; it is reported just before the retained output.
      firstRetained -= 1;
      exitSeq = firstRetained;
    }
    if (exitSeq === undefined) throw lost(target);
    const exitCode = response.exitCode ?? -1;
    const exited: SequencedEvent = {
      type: 'exited',
      seq: exitSeq,
      exitCode,
      sandboxDenied: response.sandboxDenied,
    };
    known.set(exitSeq, exited);
    events.push(exited);
    rest = [];
  } else if (response.sandboxDenied) {
    // A denial learned on recovery is added to an exit still waiting in the reorder buffer.
    for (const event of state.pending.values()) {
      if (event.type === 'exited' && event.sandboxDenied !== true)
        events.push({ ...event, sandboxDenied: true });
    }
  }
  if (rest.length > 0) throw lost(target);
  if (firstRetained !== undefined && firstRetained > last + 1)
    return { events, firstRetainedSeq: firstRetained };
  return { events };
}

function countKnown(known: ReadonlyMap<number, SequencedEvent>, from: number, to: number): number {
  let count = 0;
  for (const seq of known.keys()) if (seq >= from && seq <= to) count++;
  return count;
}

/** Seqs in [from, to] with no known event. */
function holes(known: ReadonlyMap<number, SequencedEvent>, from: number, to: number): number[] {
  const out: number[] = [];
  for (let seq = from; seq <= to; seq++) if (!known.has(seq)) out.push(seq);
  return out;
}
