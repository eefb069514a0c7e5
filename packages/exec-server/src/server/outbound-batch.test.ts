import { notificationMessage } from '@execd/protocol';
import { describe, expect, test } from 'vitest';
import { OutboundBatch } from './outbound-batch.ts';

const out = (processId: string, seq: number, text: string) =>
  notificationMessage('process/output', {
    processId,
    seq,
    stream: 'stdout',
    chunk: new TextEncoder().encode(text),
  });

describe('OutboundBatch', () => {
  test('holds only process/output notifications', () => {
    const batch = new OutboundBatch();
    expect(batch.hold(notificationMessage('process/exited', { processId: 'a', seq: 1, exitCode: 0 }))).toBe(
      false,
    );
    expect(batch.hold(notificationMessage('process/output', { processId: 'a', seq: 1 }))).toBe(false);
    expect(batch.empty).toBe(true);
    expect(batch.hold(out('a', 1, 'xy'))).toBe(true);
    expect(batch.bytes).toBe(2);
  });

  test('a single held chunk goes out as a plain process/output', () => {
    const batch = new OutboundBatch();
    batch.hold(out('a', 7, 'x'));
    const [message, ...rest] = batch.take();
    expect(rest).toEqual([]);
    expect(message).toMatchObject({ method: 'process/output', params: { processId: 'a', seq: 7 } });
    expect(batch.empty).toBe(true);
    expect(batch.bytes).toBe(0);
  });

  test('runs are grouped per process, each in seq order, oldest process first', () => {
    const batch = new OutboundBatch();
    for (const [id, seq] of [
      ['a', 1],
      ['b', 1],
      ['a', 2],
      ['c', 4],
      ['b', 2],
      ['a', 3],
    ] as const)
      batch.hold(out(id, seq, `${id}${seq}`));
    const messages = batch.take();
    expect(messages.map((m) => (m.kind === 'notification' ? m.method : m.kind))).toEqual([
      'process/outputBatch',
      'process/outputBatch',
      'process/output',
    ]);
    const params = messages.map((m) => (m as { params: Record<string, unknown> }).params);
    expect(params[0]!.processId).toBe('a');
    expect((params[0]!.chunks as { seq: number }[]).map((c) => c.seq)).toEqual([1, 2, 3]);
    expect(params[1]!.processId).toBe('b');
    expect((params[1]!.chunks as { seq: number }[]).map((c) => c.seq)).toEqual([1, 2]);
    expect(params[2]).toMatchObject({ processId: 'c', seq: 4 });
  });
});
