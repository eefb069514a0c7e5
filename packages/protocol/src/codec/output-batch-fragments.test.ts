import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { toWireObject } from '../envelope.ts';
import { notificationMessage, responseMessage } from '../messages.ts';
import { createMsgpackCodec, DEFAULT_DECODE_LIMITS, type DecodeLimits } from './index.ts';
import { encodeMsgpack } from './msgpack.ts';
import { decodeOutputBatchFragments } from './output-batch-fragments.ts';
import { outputBatchMsgpackParts } from './output-frames.ts';

const bytes = (n: number, seed = 5): Uint8Array =>
  Uint8Array.from({ length: n }, (_, i) => (i * seed + 1) & 0xff);

/** Every unsigned form the server's writer picks: fixint, uint8, uint16, uint32, uint64. */
const SEQS = [0, 127, 128, 255, 256, 65_535, 65_536, 2 ** 32 - 1, 2 ** 32, Number.MAX_SAFE_INTEGER];

const batch = (count: number, processId = 'proc-1') =>
  notificationMessage('process/outputBatch', {
    processId,
    chunks: Array.from({ length: count }, (_, i) => ({
      seq: SEQS[i % SEQS.length]!,
      stream: ['stdout', 'stderr', 'pty'][i % 3]!,
      chunk: bytes([0, 1, 255, 256, 8192, 70_000][i % 6]!, i + 2),
    })),
  });

function joined(fragments: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(fragments.reduce((n, f) => n + f.byteLength, 0));
  let at = 0;
  for (const f of fragments) {
    out.set(f, at);
    at += f.byteLength;
  }
  return out;
}

/** The frame cut at the given offsets (sorted, may repeat: empty fragments). */
function cut(frame: Uint8Array, offsets: number[]): Uint8Array[] {
  const points = [
    0,
    ...offsets.map((o) => o % (frame.byteLength + 1)).sort((a, b) => a - b),
    frame.byteLength,
  ];
  return points.slice(1).map((end, i) => frame.slice(points[i], end));
}

/** Bytes as hex (vitest compares large typed arrays element by element: slow). */
function plain(value: unknown): unknown {
  if (value instanceof Uint8Array) return `bytes:${Buffer.from(value).toString('hex')}`;
  if (Array.isArray(value)) return value.map(plain);
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  return value;
}

/** A codec call's result (bytes as hex), or the error it throws (message only). */
function outcome(run: () => unknown): unknown {
  try {
    return plain(run());
  } catch (error) {
    return { threw: (error as Error).message };
  }
}

function sameAsOrdinary(fragments: readonly Uint8Array[], limits: Partial<DecodeLimits> = {}): void {
  const codec = createMsgpackCodec(limits);
  expect(outcome(() => codec.decodeFragments(fragments))).toEqual(
    outcome(() => codec.decode(joined(fragments))),
  );
}

describe('msgpack process/outputBatch read from its WebSocket fragments', () => {
  test('as the server sends it: the ordinary result, every chunk a view of its own fragment', () => {
    for (const count of [1, 2, 6, 15, 16, 40]) {
      const parts = outputBatchMsgpackParts(batch(count))!;
      sameAsOrdinary(parts);
      const fast = decodeOutputBatchFragments(parts, DEFAULT_DECODE_LIMITS)!;
      const chunks = (fast.params as { chunks: { chunk: Uint8Array }[] }).chunks;
      expect(chunks).toHaveLength(count);
      // The data fragments are the chunks: each decoded chunk is that fragment's memory, not a copy.
      chunks.forEach((c, i) => {
        if (c.chunk.byteLength === 0) return;
        expect(c.chunk.buffer).toBe(parts[2 * i + 1]!.buffer);
        expect(c.chunk.byteOffset).toBe(parts[2 * i + 1]!.byteOffset);
      });
    }
  });

  test('cut anywhere (empty fragments too), it reads the same as the joined frame', () => {
    const frames = [1, 3, 11].map((count) => encodeMsgpack(toWireObject(batch(count))));
    fc.assert(
      fc.property(
        fc.constantFrom(...frames),
        fc.array(fc.nat(), { minLength: 1, maxLength: 12 }),
        (frame, offsets) => {
          const fragments = cut(frame, offsets);
          sameAsOrdinary(fragments);
          if (fragments.length > 1)
            expect(decodeOutputBatchFragments(fragments, DEFAULT_DECODE_LIMITS)).toBeDefined();
        },
      ),
      { numRuns: 500 },
    );
  });

  test('mutated, cut short or padded, it reads (or fails) exactly as the ordinary decoder', () => {
    const frame = encodeMsgpack(toWireObject(batch(4)));
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(frame.byteLength - 1), fc.integer({ min: 0, max: 255 })), { maxLength: 3 }),
        fc.integer({ min: -20, max: 3 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 6 }),
        (flips, resize, offsets) => {
          let mutated: Uint8Array = frame.slice();
          for (const [at, value] of flips) mutated[at] = value;
          if (resize < 0) mutated = mutated.slice(0, mutated.byteLength + resize);
          else if (resize > 0) mutated = joined([mutated, bytes(resize)]);
          sameAsOrdinary(cut(mutated, offsets));
        },
      ),
      { numRuns: 3000 },
    );
  });

  test("every limit is the ordinary decoder's: reached, the frame fails as it would joined", () => {
    const parts = outputBatchMsgpackParts(batch(6))!;
    const total = joined(parts).byteLength;
    const cases: [Partial<DecodeLimits>, RegExp][] = [
      [{ maxValues: 5 + 4 * 6 - 1 }, /values/],
      [{ maxDepth: 3 }, /nesting/],
      [{ maxStringLength: 5 }, /string of/],
      [{ maxBinLength: 69_999 }, /bin of/],
      [{ maxFrameBytes: total - 1 }, /exceeds maximum length/],
    ];
    for (const [limits, error] of cases) {
      expect(decodeOutputBatchFragments(parts, { ...DEFAULT_DECODE_LIMITS, ...limits })).toBeUndefined();
      expect(() => createMsgpackCodec(limits).decodeFragments(parts)).toThrow(error);
    }
    expect(decodeOutputBatchFragments(parts, { ...DEFAULT_DECODE_LIMITS, maxValues: 29 })).toBeDefined();
  });

  test('anything but the exact layout is left to the ordinary decoder', () => {
    const chunk = bytes(300);
    const others = [
      // A process id beyond printable ASCII, a seq past safe integers, members in another order.
      batch(2, 'é-😀'),
      notificationMessage('process/outputBatch', {
        processId: 'p',
        chunks: [{ seq: 2 ** 60, stream: 'stdout', chunk }],
      }),
      notificationMessage('process/outputBatch', {
        chunks: [{ seq: 1, stream: 'stdout', chunk }],
        processId: 'p',
      }),
      notificationMessage('process/output', { processId: 'p', seq: 1, stream: 'stdout', chunk }),
      responseMessage(7, { chunks: [chunk, chunk] }),
    ];
    for (const message of others) {
      const frame = encodeMsgpack(toWireObject(message));
      const fragments = cut(frame, [3, 40, 200]);
      expect(decodeOutputBatchFragments(fragments, DEFAULT_DECODE_LIMITS)).toBeUndefined();
      sameAsOrdinary(fragments);
    }
    // A signed seq (another encoder's choice for a small number) is read ordinarily, the same value.
    const plain = encodeMsgpack(
      toWireObject(
        notificationMessage('process/outputBatch', {
          processId: 'p',
          chunks: [{ seq: 5, stream: 'stdout', chunk }],
        }),
      ),
    );
    const key = Buffer.from(plain).indexOf(Buffer.from([0xa3, 0x73, 0x65, 0x71])) + 4;
    expect(plain[key]).toBe(5);
    const signed = joined([plain.subarray(0, key), Uint8Array.of(0xd0, 5), plain.subarray(key + 1)]);
    const fragments = cut(signed, [key + 3, key + 20]);
    expect(decodeOutputBatchFragments(fragments, DEFAULT_DECODE_LIMITS)).toBeUndefined();
    sameAsOrdinary(fragments);
    expect(createMsgpackCodec().decodeFragments(fragments)).toMatchObject({
      params: { chunks: [{ seq: 5 }] },
    });
  });
});
