import { describe, expect, test } from 'vitest';
import { EventLog } from './event-log.ts';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

describe('EventLog', () => {
  test('event_history_replay_is_bounded_by_retained_bytes: a byte cap evicts the output', () => {
    const log = new EventLog({ maxEvents: 256, maxBytes: 3 });
    log.append({ type: 'output', seq: 1, stream: 'stdout', chunk: bytes('hello') });
    log.append({ type: 'exited', seq: 2, exitCode: 0 });
    log.append({ type: 'closed', seq: 3 });
    expect(log.after(0)).toEqual([
      { type: 'exited', seq: 2, exitCode: 0 },
      { type: 'closed', seq: 3 },
    ]);
    expect(log.hasGapAfter(0)).toBe(true);
    expect(log.hasGapAfter(1)).toBe(false);
  });

  test('is bounded by event count', () => {
    const log = new EventLog({ maxEvents: 2, maxBytes: 1024 });
    for (let seq = 1; seq <= 600; seq++)
      log.append({ type: 'output', seq, stream: 'pty', chunk: bytes('z') });
    expect(log.after(0).map((e) => e.seq)).toEqual([599, 600]);
    expect(log.firstSeq).toBe(599);
    expect(log.lastSeq).toBe(600);
  });
});
