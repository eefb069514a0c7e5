import { describe, expect, test } from 'vitest';
import { HeadTailBuffer } from './head-tail-buffer.ts';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
const str = (data: Uint8Array): string => new TextDecoder().decode(data);

// Ports of the original's head_tail_buffer_tests (spec §8.9) and the §4.6 examples.
describe('HeadTailBuffer (original tests)', () => {
  test('keeps_prefix_and_suffix_when_over_budget', () => {
    const buf = new HeadTailBuffer(10);
    buf.pushChunk(bytes('0123456789'));
    expect(buf.omittedBytes).toBe(0);
    buf.pushChunk(bytes('ab'));
    expect(buf.omittedBytes).toBe(2);
    expect(str(buf.toBytes())).toBe('01234789ab');
    expect(str(buf.toBytesWithOmissionMarker())).toBe('01234\n... 2 bytes omitted ...\n789ab');
  });

  test('max_bytes_zero_drops_everything', () => {
    const buf = new HeadTailBuffer(0);
    buf.pushChunk(bytes('abc'));
    expect(buf.retainedBytes).toBe(0);
    expect(buf.omittedBytes).toBe(3);
    expect(buf.toBytes()).toEqual(new Uint8Array(0));
    expect(buf.snapshotChunks()).toEqual([]);
  });

  test('head_budget_zero_keeps_only_last_byte_in_tail', () => {
    const buf = new HeadTailBuffer(1);
    buf.pushChunk(bytes('abc'));
    expect(buf.retainedBytes).toBe(1);
    expect(buf.omittedBytes).toBe(2);
    expect(str(buf.toBytes())).toBe('c');
  });

  test('draining_resets_state', () => {
    const buf = new HeadTailBuffer(10);
    buf.pushChunk(bytes('0123456789'));
    buf.pushChunk(bytes('ab'));
    expect(buf.drainChunks().map(str)).toEqual(['01234', '789ab']);
    expect(buf.retainedBytes).toBe(0);
    expect(buf.omittedBytes).toBe(0);
    expect(buf.toBytes()).toEqual(new Uint8Array(0));
  });

  test('chunk_larger_than_tail_budget_keeps_only_tail_end', () => {
    const buf = new HeadTailBuffer(10);
    buf.pushChunk(bytes('0123456789'));
    buf.pushChunk(bytes('ABCDEFGHIJK'));
    expect(str(buf.toBytes())).toBe('01234GHIJK');
    expect(buf.omittedBytes).toBe(11);
  });

  test('fills_head_then_tail_across_multiple_chunks', () => {
    const buf = new HeadTailBuffer(10);
    buf.pushChunk(bytes('01'));
    buf.pushChunk(bytes('234'));
    expect(str(buf.toBytes())).toBe('01234');
    buf.pushChunk(bytes('567'));
    buf.pushChunk(bytes('89'));
    expect(str(buf.toBytes())).toBe('0123456789');
    expect(buf.omittedBytes).toBe(0);
    buf.pushChunk(bytes('a'));
    expect(str(buf.toBytes())).toBe('012346789a');
    expect(buf.omittedBytes).toBe(1);
  });

  test('empty_and_tiny_chunks_have_bounded_metadata', () => {
    const buf = new HeadTailBuffer(10);
    for (const char of '0123456789ab') {
      buf.pushChunk(new Uint8Array(0));
      buf.pushChunk(bytes(char));
    }
    expect(buf.snapshotChunks().map(str)).toEqual(['01234', '789ab']);
    expect(buf.retainedBytes).toBe(10);
    expect(buf.omittedBytes).toBe(2);
  });
});

/** The obvious (slow) definition: keep everything, cut at the end. */
function reference(max: number, chunks: Uint8Array[]): { head: string; tail: string; omitted: number } {
  const all = str(Uint8Array.from(chunks.flatMap((chunk) => [...chunk])));
  const headBudget = Math.floor(max / 2);
  const tailBudget = max - headBudget;
  if (all.length <= max) {
    return { head: all.slice(0, headBudget), tail: all.slice(headBudget), omitted: 0 };
  }
  return {
    head: all.slice(0, headBudget),
    tail: tailBudget === 0 ? '' : all.slice(all.length - tailBudget),
    omitted: all.length - max,
  };
}

/** A small deterministic generator (xorshift), so failures reproduce. */
function randomChunks(seed: number, count: number, maxLen: number): Uint8Array[] {
  let state = seed;
  const next = (bound: number): number => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) % bound;
  };
  const letters = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return Array.from({ length: count }, () =>
    bytes(Array.from({ length: next(maxLen + 1) }, () => letters[next(letters.length)]).join('')),
  );
}

describe('HeadTailBuffer (behaviour)', () => {
  test('matches the keep-everything definition for many chunk patterns and capacities', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const max = seed % 37;
      const chunks = randomChunks(seed, 1 + (seed % 25), 1 + (seed % 19));
      const buf = new HeadTailBuffer(max);
      for (const chunk of chunks) buf.pushChunk(chunk);
      const expected = reference(max, chunks);
      expect(str(buf.toBytes()), `seed ${seed}`).toBe(expected.head + expected.tail);
      expect(buf.omittedBytes, `seed ${seed}`).toBe(expected.omitted);
      expect(buf.totalBytes).toBe(chunks.reduce((n, chunk) => n + chunk.length, 0));
    }
  });

  test('pushBuffer of a drained buffer equals pushing its chunks (same capacity)', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const max = 2 + (seed % 31);
      const chunks = randomChunks(seed * 7, 1 + (seed % 20), 1 + (seed % 13));
      const source = new HeadTailBuffer(max);
      const direct = new HeadTailBuffer(max);
      for (const chunk of chunks) {
        source.pushChunk(chunk);
        direct.pushChunk(chunk);
      }
      const collected = new HeadTailBuffer(max);
      collected.pushBuffer(source);
      expect(str(collected.toBytesWithOmissionMarker()), `seed ${seed}`).toBe(
        str(direct.toBytesWithOmissionMarker()),
      );
    }
  });

  test('output collection stays bounded and keeps omissions across repeated drains', () => {
    const process = new HeadTailBuffer(10);
    const collected = new HeadTailBuffer(10);
    for (let round = 0; round < 50; round++) {
      process.pushChunk(bytes(`chunk-${round}|`));
      collected.pushBuffer(process);
      process.clear();
    }
    expect(collected.retainedBytes).toBe(10);
    const total = Array.from({ length: 50 }, (_, round) => `chunk-${round}|`).join('');
    expect(collected.totalBytes).toBe(total.length);
    expect(str(collected.toBytes())).toBe(total.slice(0, 5) + total.slice(-5));
    expect(str(collected.toBytesWithOmissionMarker())).toBe(
      `${total.slice(0, 5)}\n... ${total.length - 10} bytes omitted ...\n${total.slice(-5)}`,
    );
  });

  test('pushBuffer after a gap never joins later bytes to the head', () => {
    const source = new HeadTailBuffer(4);
    source.pushChunk(bytes('abcdefgh')); // head "ab", tail "gh", 4 omitted
    const big = new HeadTailBuffer(100);
    big.pushBuffer(source);
    big.pushChunk(bytes('XY'));
    expect(str(big.toBytesWithOmissionMarker())).toBe('ab\n... 4 bytes omitted ...\nghXY');
  });

  test('a buffer can be pushed into itself', () => {
    const buf = new HeadTailBuffer(100);
    buf.pushChunk(bytes('abc'));
    buf.pushBuffer(buf);
    expect(str(buf.toBytes())).toBe('abcabc');
  });

  test('1 MiB default keeps 512 KiB head and tail of 2 MB', () => {
    const buf = new HeadTailBuffer();
    expect(buf.maxBytes).toBe(1024 * 1024);
    const chunk = new Uint8Array(4096);
    for (let i = 0; i < 500; i++) buf.pushChunk(chunk.fill(i % 256));
    expect(buf.retainedBytes).toBe(1024 * 1024);
    expect(buf.omittedBytes).toBe(500 * 4096 - 1024 * 1024);
    const out = buf.toBytes();
    expect(out[0]).toBe(0);
    expect(out[out.length - 1]).toBe(499 % 256);
  });

  test('rejects a negative capacity', () => {
    expect(() => new HeadTailBuffer(-1)).toThrow(RangeError);
  });
});
