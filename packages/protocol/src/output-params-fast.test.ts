import fc from 'fast-check';
import * as v from 'valibot';
import { describe, expect, test } from 'vitest';
import { decodeParams, METHODS } from './methods.ts';
import { plainOutputBatchParams, plainOutputParams } from './output-params-fast.ts';

/** The schema's own verdict: its output, or undefined when it refuses. */
function bySchema(method: 'process/output' | 'process/outputBatch', raw: unknown): unknown {
  const parsed = v.safeParse(METHODS[method].params as v.GenericSchema, raw);
  return parsed.success ? parsed.output : undefined;
}

// Values near every edge the schemas draw: seq 0, 1, fractions, unsafe integers, strings; the
// three stream names and near misses; bytes and byte-like values; extra, missing and reordered
// members; objects with an unusual prototype.
const seq = fc.oneof(
  fc.constantFrom(0, 1, 2, -1, 1.5, 2 ** 53 - 1, 2 ** 53, Number.NaN, Number.POSITIVE_INFINITY, '1', null),
  fc.integer({ min: 1, max: 1_000_000 }),
);
const stream = fc.constantFrom('stdout', 'stderr', 'pty', 'STDOUT', '', 'stdin', 1, undefined);
const chunk = fc.oneof(
  fc.uint8Array({ maxLength: 8 }),
  fc.constant(Buffer.from('hi')),
  fc.constant('aGk='),
  fc.constant([104, 105]),
  fc.constant(new Uint16Array(2)),
);
const processId = fc.oneof(fc.string({ maxLength: 4 }), fc.constantFrom(1, null));
type Rec = Record<string, unknown>;
/** Builds a record whose members come in the given order (or shuffled, extended, cut). */
const shaped = (entries: [string, fc.Arbitrary<unknown>][]) =>
  fc
    .tuple(
      fc.tuple(...entries.map(([key, arb]) => arb.map((value) => [key, value] as const))),
      fc.constantFrom('as-is', 'reversed', 'extra', 'missing', 'null-proto', 'class'),
    )
    .map(([pairs, how]) => {
      let list = [...pairs];
      if (how === 'reversed') list = list.reverse();
      if (how === 'extra') list.push(['extra', 1]);
      if (how === 'missing') list = list.slice(1);
      const record: Rec =
        how === 'null-proto' ? Object.create(null) : how === 'class' ? new (class {})() : {};
      for (const [key, value] of list) record[key] = value;
      return record;
    });
const outputChunk = shaped([
  ['seq', seq],
  ['stream', stream],
  ['chunk', chunk],
]);
const output = shaped([
  ['processId', processId],
  ['seq', seq],
  ['stream', stream],
  ['chunk', chunk],
]);
const batch = shaped([
  ['processId', processId],
  ['chunks', fc.oneof(fc.array(outputChunk, { maxLength: 4 }), fc.constant(null))],
]);

describe('output notification params pass without a copy exactly when the schema outputs them as they are', () => {
  test.each([
    ['process/output', output, plainOutputParams],
    ['process/outputBatch', batch, plainOutputBatchParams],
  ] as const)('%s', (method, arbitrary, plain) => {
    let passed = 0;
    fc.assert(
      fc.property(arbitrary, (raw) => {
        const expected = bySchema(method, raw);
        const fast = plain(raw);
        if (fast !== undefined) {
          passed++;
          // Accepted as is: the schema accepts it too and outputs an equal value.
          expect(fast).toBe(raw);
          expect(expected).toEqual(raw);
        }
        // Whatever the fast check says, decodeParams decides as the schema does.
        if (expected === undefined) expect(() => decodeParams(method, raw)).toThrow();
        else expect(decodeParams(method, raw)).toEqual(expected);
      }),
      { numRuns: 3000 },
    );
    // The generators reach the fast path often enough to mean something.
    expect(passed).toBeGreaterThan(20);
  });

  test('the servers own frames take the fast path', () => {
    const chunk = new Uint8Array([1, 2, 3]);
    const one = { processId: 'p', seq: 7, stream: 'pty', chunk };
    expect(plainOutputParams(one)).toBe(one);
    const many = { processId: 'p', chunks: [{ seq: 1, stream: 'stdout', chunk }] };
    expect(plainOutputBatchParams(many)).toBe(many);
    expect(plainOutputBatchParams({ processId: 'p', chunks: [] })).toBeDefined();
    // A seq of 0 is the schema's to refuse (with its message).
    expect(plainOutputParams({ ...one, seq: 0 })).toBeUndefined();
    expect(() => decodeParams('process/output', { ...one, seq: 0 })).toThrow(/seq/);
  });
});
