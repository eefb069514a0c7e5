// The client's per-process ordering and recovery merge, fed events and read answers directly
// (the original's client.rs / client_recovery_tests.rs cases, spec §3.5).
import { ExecError, type ReadResponse, utf8 } from '@execd/protocol';
import type { SequencedEvent } from '@execd/protocol/contract';
import { describe, expect, test } from 'vitest';
import { ProcessSession } from './process-session.ts';
import { planReadMerge } from './read-merge.ts';

const out = (seq: number, text = `o${seq}`): SequencedEvent => ({
  type: 'output',
  seq,
  stream: 'stdout',
  chunk: utf8(text),
});
const exited = (seq: number, exitCode = 0, sandboxDenied?: boolean): SequencedEvent =>
  sandboxDenied === undefined
    ? { type: 'exited', seq, exitCode }
    : { type: 'exited', seq, exitCode, sandboxDenied };
const closed = (seq: number): SequencedEvent => ({ type: 'closed', seq });

function read(partial: Partial<ReadResponse> & { nextSeq: number }): ReadResponse {
  return {
    chunks: [],
    exited: false,
    exitCode: null,
    closed: false,
    failure: null,
    sandboxDenied: false,
    ...partial,
  };
}

function chunk(seq: number, text = `o${seq}`): ReadResponse['chunks'][number] {
  return { seq, stream: 'stdout', chunk: utf8(text) };
}

function published(session: ProcessSession): unknown[] {
  return session.log
    .after(0)
    .map((e) => (e.type === 'output' ? `${e.seq}:${Buffer.from(e.chunk)}` : `${e.seq}:${e.type}`));
}

function started(id = 'p'): ProcessSession {
  const session = new ProcessSession(id);
  session.started = true;
  return session;
}

describe('ProcessSession ordering', () => {
  test('process_events_are_delivered_in_seq_order_when_notifications_are_reordered', () => {
    const session = started();
    for (const event of [exited(3, 7), out(2), closed(4), out(1), out(2), exited(3, 7)])
      session.accept(event);
    expect(published(session)).toEqual(['1:o1', '2:o2', '3:exited', '4:closed']);
    expect(session.closed).toBe(true);
    expect(session.pendingCount).toBe(0);
    // Nothing is accepted after closed.
    session.accept(out(5));
    expect(session.lastPublished).toBe(4);
  });

  test('a hole is reported as needing a fill; the buffer stops growing at its caps', () => {
    const session = new ProcessSession('p', { pendingEvents: 3, pendingBytes: 1024 });
    session.started = true;
    for (const seq of [2, 3, 4]) session.accept(out(seq));
    expect(session.needsFill).toBe(true);
    expect(session.overflowed).toBe(false);
    session.accept(out(5));
    expect(session.pendingCount).toBe(3);
    expect(session.overflowed).toBe(true);
    expect(session.dropCount).toBe(1);
    // The fill read brings everything, including what was dropped.
    session.merge(read({ nextSeq: 6, chunks: [1, 2, 3, 4, 5].map((seq) => chunk(seq)) }), 1);
    expect(published(session)).toEqual(['1:o1', '2:o2', '3:o3', '4:o4', '5:o5']);
    expect(session.needsFill).toBe(false);
  });

  test('process_event_reorder_rejects_oversized_output (held back, filled by a read instead)', () => {
    const session = new ProcessSession('p', { pendingBytes: 8 });
    session.started = true;
    session.accept(out(2, 'much more than eight bytes'));
    expect(session.pendingCount).toBe(0);
    expect(session.overflowed).toBe(true);
    session.merge(read({ nextSeq: 3, chunks: [chunk(1), chunk(2, 'much more than eight bytes')] }), 1);
    expect(published(session)).toEqual(['1:o1', '2:much more than eight bytes']);
  });

  test('process_event_reorder_accepts_gap_closing_event_at_limits', () => {
    const session = new ProcessSession('p', { pendingEvents: 2 });
    session.started = true;
    session.accept(out(2));
    session.accept(out(3));
    // The buffer is full, but the event that closes the hole is published, not held.
    session.accept(out(1));
    expect(published(session)).toEqual(['1:o1', '2:o2', '3:o3']);
    expect(session.overflowed).toBe(false);
  });

  test('drops newer than a fill read keep the session needing another fill', () => {
    const session = new ProcessSession('p', { pendingEvents: 1 });
    session.started = true;
    session.accept(out(2));
    session.accept(out(3)); // dropped
    const atRequest = session.dropCount;
    session.accept(out(5)); // dropped after the read was sent
    session.merge(read({ nextSeq: 4, chunks: [chunk(1), chunk(2), chunk(3)] }), atRequest);
    expect(session.lastPublished).toBe(3);
    expect(session.needsFill).toBe(true);
  });

  test('failure: first message wins, synthesized read response, no more events', () => {
    const session = started();
    session.accept(out(1));
    session.fail('first');
    session.fail('second');
    session.accept(out(2));
    expect(session.failure).toBe('first');
    expect(session.live).toBe(false);
    expect(session.failureResponse()).toEqual({
      chunks: [],
      nextSeq: 2,
      exited: true,
      exitCode: null,
      closed: true,
      failure: 'first',
      sandboxDenied: false,
    });
  });

  test('write ids count per process from "1"', () => {
    const a = started('a');
    const b = started('b');
    expect([a.nextWriteId(), a.nextWriteId(), b.nextWriteId()]).toEqual(['1', '2', '1']);
  });
});

describe('planReadMerge (recover_events)', () => {
  const state = (lastPublished: number, pending: SequencedEvent[] = [], exitSeen = false) => ({
    processId: 'p',
    lastPublished,
    pending: new Map(pending.map((e) => [e.seq, e])),
    exitSeen,
  });

  test('the exit is inserted at the one missing seq, closed at the last', () => {
    const plan = planReadMerge(
      state(1),
      read({ nextSeq: 5, chunks: [chunk(2)], exited: true, exitCode: 7, closed: true }),
    );
    expect(plan.events.map((e) => [e.type, e.seq])).toEqual([
      ['output', 2],
      ['closed', 4],
      ['exited', 3],
    ]);
    expect(plan.firstRetainedSeq).toBeUndefined();
  });

  test('late output after the exit: the exit takes the earlier hole', () => {
    const session = started();
    session.merge(read({ nextSeq: 4, chunks: [chunk(2)], exited: true, exitCode: 0, closed: true }));
    expect(published(session)).toEqual(['1:exited', '2:o2', '3:closed']);
  });

  test('recovery_handles_dense_tail_output_and_newer_notification', () => {
    const session = started();
    session.accept(out(1));
    // A notification newer than the read's answer arrives first.
    session.accept(out(6));
    session.merge(read({ nextSeq: 6, chunks: [2, 3, 4, 5].map((seq) => chunk(seq)) }));
    expect(published(session)).toEqual(['1:o1', '2:o2', '3:o3', '4:o4', '5:o5', '6:o6']);
  });

  test('recovery_rejects_output_at_closed_sequence', () => {
    expect(() =>
      planReadMerge(
        state(0),
        read({ nextSeq: 3, chunks: [chunk(1), chunk(2)], exited: true, exitCode: 0, closed: true }),
      ),
    ).toThrow(ExecError);
    expect(() => planReadMerge(state(0), read({ nextSeq: 2, chunks: [chunk(2)] }))).toThrow(/beyond nextSeq/);
  });

  test('recovery_adds_sandbox_denial_to_pending_exit_event', () => {
    const session = started();
    session.accept(exited(2, 1, false));
    session.merge(read({ nextSeq: 3, chunks: [chunk(1)], exited: true, exitCode: 1, sandboxDenied: true }));
    expect(session.log.after(0).at(-1)).toEqual(exited(2, 1, true));
  });

  test('more than one unexplained hole is refused, as the original', () => {
    const error = (() => {
      try {
        planReadMerge(state(0), read({ nextSeq: 4, chunks: [chunk(3)], exited: true, exitCode: 0 }));
      } catch (thrown) {
        return thrown;
      }
    })();
    // Holes 1 and 2 before the first chunk: read as evicted output (see the next test) ...
    expect(error).toBeUndefined();
    // ... but holes after the first returned chunk cannot be.
    expect(() =>
      planReadMerge(state(0), read({ nextSeq: 5, chunks: [chunk(1), chunk(4)], exited: true, exitCode: 0 })),
    ).toThrow('process events are no longer retained while recovering through sequence 4');
  });

  test('firstRetainedSeq: the stream jumps over the lost output and remembers the gap', () => {
    const session = started();
    session.accept(out(1));
    const gap = session.merge(
      read({ nextSeq: 11, chunks: [8, 9, 10].map((seq) => chunk(seq)), firstRetainedSeq: 8 }),
    );
    expect(gap).toBe(8);
    expect(published(session)).toEqual(['1:o1', '8:o8', '9:o9', '10:o10']);
    expect(session.isGapBefore(8)).toBe(true);
    expect(session.lastPublished).toBe(10);
  });

  test('an original server evicting silently: the missing prefix is read as a gap', () => {
    const plan = planReadMerge(
      state(0),
      read({ nextSeq: 7, chunks: [4, 5].map((seq) => chunk(seq)), exited: true, exitCode: 3, closed: true }),
    );
    // Seqs 1-3 are missing: the exit takes the last of them, 1-2 were evicted output.
    expect(plan.firstRetainedSeq).toBe(3);
    expect(plan.events.map((e) => [e.type, e.seq])).toEqual([
      ['output', 4],
      ['output', 5],
      ['closed', 6],
      ['exited', 3],
    ]);
  });

  test('an exit lost inside the evicted range is reported just before the retained output', () => {
    const plan = planReadMerge(
      state(0),
      read({
        nextSeq: 9,
        chunks: [6, 7].map((seq) => chunk(seq)),
        exited: true,
        exitCode: 0,
        closed: true,
        firstRetainedSeq: 6,
      }),
    );
    expect(plan.firstRetainedSeq).toBe(5);
    expect(plan.events.find((e) => e.type === 'exited')).toMatchObject({ seq: 5 });
  });

  test('nothing new: an empty plan', () => {
    expect(planReadMerge(state(4, [], true), read({ nextSeq: 5, exited: true, exitCode: 0 })).events).toEqual(
      [],
    );
  });
});
