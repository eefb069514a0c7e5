import { collectGarbage } from '@execd/test-kit';
import { describe, expect, test } from 'vitest';
import { RetainedOutput } from './retained-output.ts';
import { WriteIdSet } from './write-ids.ts';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

describe('RetainedOutput', () => {
  test('evicts the oldest chunk beyond the chunk limit and reports the gap', () => {
    const output = new RetainedOutput({ maxBytes: 1024 * 1024, maxChunks: 3 });
    for (let seq = 1; seq <= 4; seq++) output.push(seq, 'stdout', bytes('x'));
    expect(output.count).toBe(3);
    expect(output.firstSeq).toBe(2);
    expect(output.lastEvictedSeq).toBe(1);
    const page = output.page(0, Number.POSITIVE_INFINITY);
    expect(page.chunks.map((c) => c.seq)).toEqual([2, 3, 4]);
    expect(page.firstRetainedSeq).toBe(2);
    expect(output.page(1, Number.POSITIVE_INFINITY).firstRetainedSeq).toBeUndefined();
  });

  test('evicts by bytes but always keeps the newest chunk', () => {
    const output = new RetainedOutput({ maxBytes: 4, maxChunks: 100 });
    output.push(1, 'stdout', bytes('abc'));
    output.push(2, 'stderr', bytes('de'));
    expect(output.after(0).map((c) => c.seq)).toEqual([2]);
    output.push(3, 'stdout', bytes('0123456789'));
    expect(output.after(0).map((c) => c.seq)).toEqual([3]);
    expect(output.bytes).toBe(10);
  });

  test('pages by maxBytes: the first chunk always, stop before overflow, stop at the budget', () => {
    const output = new RetainedOutput({ maxBytes: 1024, maxChunks: 100 });
    output.push(1, 'stdout', bytes('aaaa'));
    output.push(2, 'stdout', bytes('bb'));
    output.push(4, 'stderr', bytes('cc'));
    output.push(5, 'stdout', bytes('d'));
    expect(output.page(0, 1).chunks.map((c) => c.seq)).toEqual([1]);
    expect(output.page(0, 6).chunks.map((c) => c.seq)).toEqual([1, 2]);
    expect(output.page(0, 7).chunks.map((c) => c.seq)).toEqual([1, 2]);
    expect(output.page(1, 5).chunks.map((c) => c.seq)).toEqual([2, 4, 5]);
    expect(output.page(2, 100).chunks.map((c) => c.seq)).toEqual([4, 5]);
    expect(output.page(3, 100).chunks.map((c) => c.seq)).toEqual([4, 5]);
    expect(output.page(5, 100).chunks).toEqual([]);
  });

  test('stays correct across many evictions (internal compaction)', () => {
    const output = new RetainedOutput({ maxBytes: 1024 * 1024, maxChunks: 10 });
    for (let seq = 1; seq <= 5000; seq++) output.push(seq, 'stdout', bytes('y'));
    expect(output.after(0).map((c) => c.seq)).toEqual([
      4991, 4992, 4993, 4994, 4995, 4996, 4997, 4998, 4999, 5000,
    ]);
    expect(output.after(4995).map((c) => c.seq)).toEqual([4996, 4997, 4998, 4999, 5000]);
  });

  test('an evicted chunk is let go at once, not when the queue is compacted', async () => {
    const output = new RetainedOutput({ maxBytes: 1024 * 1024, maxChunks: 50_000 });
    // 2,000 chunks of 8 KiB, each in memory of its own (as a view pins its read buffer).
    const evicted = pushChunks(output, 2000, 8192);
    expect(evicted.length).toBe(2000 - 128);
    await collectGarbage();
    expect(evicted.filter((ref) => ref.deref() !== undefined)).toHaveLength(0);
    expect(output.count).toBe(128);
  });
});

/** Pushes `count` chunks; weak references to the memory of those evicted by the end. */
function pushChunks(output: RetainedOutput, count: number, size: number): WeakRef<ArrayBufferLike>[] {
  const refs: WeakRef<ArrayBufferLike>[] = [];
  for (let seq = 1; seq <= count; seq++) {
    const chunk = new Uint8Array(size);
    refs.push(new WeakRef(chunk.buffer));
    output.push(seq, 'stdout', chunk);
  }
  return refs.slice(0, output.lastEvictedSeq);
}

describe('WriteIdSet', () => {
  test('forgets the oldest id beyond capacity', () => {
    const ids = new WriteIdSet(2);
    ids.add('a');
    ids.add('b');
    ids.add('a');
    ids.add('c');
    expect(ids.has('a')).toBe(false);
    expect(ids.has('b')).toBe(true);
    expect(ids.has('c')).toBe(true);
    expect(ids.size).toBe(2);
  });
});
