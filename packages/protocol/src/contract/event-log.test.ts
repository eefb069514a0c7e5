import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
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

  test('an evicted event lets its chunk go at once, not when the log is compacted', async () => {
    const log = new EventLog({ maxEvents: 256, maxBytes: 1024 * 1024 });
    const refs: WeakRef<ArrayBufferLike>[] = [];
    for (let seq = 1; seq <= 500; seq++) {
      const chunk = new Uint8Array(8192); // memory of its own, as a view pins its read buffer
      refs.push(new WeakRef(chunk.buffer));
      log.append({ type: 'output', seq, stream: 'stdout', chunk });
    }
    const evicted = refs.slice(0, log.lastEvictedSeq);
    expect(evicted.length).toBe(500 - 128);
    // A full collection once this job is over (WeakRefs made in it are kept until then).
    await new Promise((resolve) => setImmediate(resolve));
    v8.setFlagsFromString('--expose-gc');
    (runInNewContext('gc') as () => void)();
    v8.setFlagsFromString('--no-expose-gc');
    expect(evicted.filter((ref) => ref.deref() !== undefined)).toHaveLength(0);
    expect(log.after(0)).toHaveLength(128);
  });
});
