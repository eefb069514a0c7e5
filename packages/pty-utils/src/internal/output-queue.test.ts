import { describe, expect, test } from 'vitest';
import type { OutputChunk } from '../types.ts';
import { OutputQueue } from './output-queue.ts';

function queueWithLog(high = 100, low = 20): { queue: OutputQueue; pressure: boolean[] } {
  const pressure: boolean[] = [];
  const queue = new OutputQueue({
    highWaterBytes: high,
    lowWaterBytes: low,
    onPressure: (p) => pressure.push(p),
  });
  return { queue, pressure };
}

async function drain(iterable: AsyncIterable<OutputChunk>): Promise<OutputChunk[]> {
  const out: OutputChunk[] = [];
  for await (const chunk of iterable) out.push(chunk);
  return out;
}

describe('OutputQueue', () => {
  test('splits large reads into 8 KiB views of the same memory, in order', async () => {
    const { queue } = queueWithLog(1 << 30, 0);
    const big = new Uint8Array(20_000).map((_, i) => i % 251);
    queue.push('stdout', big);
    queue.push('stderr', new Uint8Array([1, 2, 3]));
    queue.end();
    const chunks = await drain(queue.consume());
    expect(chunks.map((c) => [c.stream, c.bytes.length])).toEqual([
      ['stdout', 8192],
      ['stdout', 8192],
      ['stdout', 3616],
      ['stderr', 3],
    ]);
    expect(chunks.every((c, i) => i === 3 || c.bytes.buffer === big.buffer)).toBe(true);
    expect(Buffer.concat(chunks.slice(0, 3).map((c) => c.bytes)).equals(Buffer.from(big))).toBe(true);
  });

  test('signals pressure at the high mark and releases it at the low mark', async () => {
    const { queue, pressure } = queueWithLog(100, 20);
    for (let i = 0; i < 12; i++) queue.push('pty', new Uint8Array(10));
    expect(pressure).toEqual([true]);
    expect(queue.bufferedBytes).toBe(120);
    const iterator = queue.consume()[Symbol.asyncIterator]();
    for (let i = 0; i < 9; i++) await iterator.next();
    expect(pressure).toEqual([true]); // 30 bytes left: still above the low mark
    await iterator.next();
    expect(pressure).toEqual([true, false]);
    queue.end();
    expect((await drain({ [Symbol.asyncIterator]: () => iterator })).length).toBe(2);
  });

  test('a waiting consumer wakes on push and finishes on end', async () => {
    const { queue } = queueWithLog();
    const result = drain(queue.consume());
    await Promise.resolve();
    queue.push('stdout', new Uint8Array([7]));
    queue.end();
    queue.push('stdout', new Uint8Array([8])); // after end: ignored
    expect((await result).map((c) => [...c.bytes])).toEqual([[7]]);
  });

  test('has a single consumer', () => {
    const { queue } = queueWithLog();
    queue.consume();
    expect(() => queue.consume()).toThrow(expect.objectContaining({ code: 'unsupported' }));
  });

  test('a consumer that leaves early releases pressure and drops later output', async () => {
    const { queue, pressure } = queueWithLog(10, 5);
    for (let i = 0; i < 5; i++) queue.push('stdout', new Uint8Array(4));
    expect(pressure).toEqual([true]);
    for await (const _ of queue.consume()) break;
    expect(pressure).toEqual([true, false]);
    queue.push('stdout', new Uint8Array(100));
    expect(queue.bufferedBytes).toBe(0);
    expect(pressure).toEqual([true, false]);
  });

  test('ignores empty reads', async () => {
    const { queue } = queueWithLog();
    queue.push('stdout', new Uint8Array(0));
    queue.end();
    expect(await drain(queue.consume())).toEqual([]);
  });
});
