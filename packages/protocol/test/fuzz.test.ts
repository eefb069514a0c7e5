// Fuzz both decoders: random bytes, random token streams and mutated valid frames must either
// decode within the limits or throw FrameDecodeError; validation afterwards throws only RpcError.
// Run counts are sized to keep this file at a few seconds on a slow 2-core machine.
import { encode as msgpackEncode } from '@msgpack/msgpack';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  type Codec,
  createJsonCodec,
  createMsgpackCodec,
  type DecodeLimits,
  decodeParams,
  decodeResult,
  FrameDecodeError,
  METHODS,
  type MethodName,
  notificationMessage,
  RpcError,
  requestMessage,
  responseMessage,
} from '../src/index.ts';
import { SAMPLES } from './fixtures/samples.ts';
import { valueStats } from './helpers/value-stats.ts';

const SMALL_LIMITS: DecodeLimits = {
  maxFrameBytes: 4096,
  maxValues: 64,
  maxDepth: 8,
  maxStringLength: 256,
  maxBinLength: 256,
};
const CODECS = {
  json: createJsonCodec(),
  msgpack: createMsgpackCodec(),
  smallJson: createJsonCodec(SMALL_LIMITS),
  smallMsgpack: createMsgpackCodec(SMALL_LIMITS),
} satisfies Record<string, Codec>;
const METHOD_NAMES = Object.keys(METHODS) as MethodName[];
const RUNS = 1500;

/** Decodes `frame`; returns the value or null, failing the test on anything but FrameDecodeError. */
function tryDecode(codec: Codec, frame: Uint8Array | string): unknown {
  try {
    return codec.decodeValue(frame);
  } catch (error) {
    if (!(error instanceof FrameDecodeError) || error.code !== 'invalidRequest') throw error;
    return null;
  }
}

/** Full receive path: decode, classify, validate against every method; only RpcErrors allowed. */
function receiveAnyway(codec: Codec, frame: Uint8Array | string): void {
  let message: ReturnType<Codec['decode']>;
  try {
    message = codec.decode(frame);
  } catch (error) {
    if (!(error instanceof FrameDecodeError)) throw error;
    return;
  }
  const payload = 'params' in message ? message.params : 'result' in message ? message.result : null;
  for (const method of METHOD_NAMES) {
    for (const validate of [decodeParams, decodeResult]) {
      try {
        validate(method, payload);
      } catch (error) {
        if (!RpcError.is(error)) throw error;
      }
    }
  }
}

function expectWithinLimits(value: unknown, limits: DecodeLimits): void {
  if (value === null) return;
  const stats = valueStats(value);
  expect(stats.values).toBeLessThanOrEqual(limits.maxValues);
  expect(stats.depth).toBeLessThanOrEqual(limits.maxDepth);
  expect(stats.longestString).toBeLessThanOrEqual(limits.maxStringLength);
  expect(stats.longestBin).toBeLessThanOrEqual(limits.maxBinLength);
}

/** Every sample message of every method, encoded by `codec`. */
function sampleFrames(codec: Codec): Uint8Array[] {
  const frames: Uint8Array[] = [];
  for (const method of METHOD_NAMES) {
    const isNotification = METHODS[method].type === 'notification';
    for (const params of SAMPLES[method].params) {
      const value = decodeParams(method, params);
      frames.push(
        codec.encode(isNotification ? notificationMessage(method, value) : requestMessage(1, method, value)),
      );
    }
    for (const result of SAMPLES[method].results) {
      frames.push(codec.encode(responseMessage(2, decodeResult(method, result))));
    }
  }
  return frames;
}

/** A mutation of a valid frame: each one a way real corruption or an attacker changes bytes. */
const mutation = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({
    kind: fc.constant('insert' as const),
    at: fc.nat(),
    bytes: fc.uint8Array({ minLength: 1, maxLength: 6 }),
  }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 6 }) }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('hugeLength' as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant('repeat' as const),
    at: fc.nat(),
    length: fc.integer({ min: 1, max: 16 }),
    times: fc.integer({ min: 2, max: 40 }),
  }),
);
type Mutation = typeof mutation extends fc.Arbitrary<infer T> ? T : never;

function mutate(frame: Uint8Array, edits: Mutation[]): Uint8Array {
  let bytes = Array.from(frame);
  for (const edit of edits) {
    const at = bytes.length === 0 ? 0 : edit.at % bytes.length;
    switch (edit.kind) {
      case 'set':
        bytes[at] = edit.byte;
        break;
      case 'flip':
        bytes[at] = (bytes[at] ?? 0) ^ (1 << edit.bit);
        break;
      case 'insert':
        bytes.splice(at, 0, ...edit.bytes);
        break;
      case 'delete':
        bytes.splice(at, edit.length);
        break;
      case 'truncate':
        bytes = bytes.slice(0, at);
        break;
      case 'hugeLength':
        // A 32-bit length header (bin32/str32/array32/map32) claiming ~4 GiB.
        bytes.splice(at, 0, 0xc6 + ((edit.at >> 3) % 2) * 0x15, 0xff, 0xff, 0xff, 0xfe);
        break;
      case 'repeat': {
        const piece = bytes.slice(at, at + edit.length);
        bytes.splice(at, 0, ...Array.from({ length: edit.times - 1 }, () => piece).flat());
        break;
      }
    }
  }
  return new Uint8Array(bytes);
}

describe.each([
  ['json', CODECS.json, CODECS.smallJson],
  ['msgpack', CODECS.msgpack, CODECS.smallMsgpack],
] as const)('%s decoder', (_name, codec, small) => {
  test('random bytes decode or fail with FrameDecodeError, within the limits', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), (frame) => {
        expectWithinLimits(tryDecode(small, frame), SMALL_LIMITS);
        receiveAnyway(codec, frame);
      }),
      { numRuns: RUNS },
    );
  });

  test('mutated valid frames decode or fail with FrameDecodeError, within the limits', () => {
    const frames = sampleFrames(codec);
    fc.assert(
      fc.property(
        fc.nat(frames.length - 1),
        fc.array(mutation, { minLength: 1, maxLength: 4 }),
        (index, edits) => {
          const frame = mutate(frames[index]!, edits);
          expectWithinLimits(tryDecode(small, frame), SMALL_LIMITS);
          receiveAnyway(codec, frame);
        },
      ),
      { numRuns: RUNS },
    );
  });

  test('every valid JSON-like value within the limits is accepted (no false refusals)', () => {
    const encodeFor = (value: unknown) =>
      codec.name === 'json' ? JSON.stringify(value) : msgpackEncode(value, { ignoreUndefined: true });
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        // msgpack's library refuses a `__proto__` key outright; everything else must pass.
        fc.pre(!JSON.stringify(value).includes('"__proto__"'));
        expect(codec.decodeValue(encodeFor(value))).toEqual(JSON.parse(JSON.stringify(value)));
      }),
      { numRuns: 500 },
    );
  });
});

describe('json decoder, text input', () => {
  test('random and JSON-shaped strings decode or fail with FrameDecodeError', () => {
    const jsonish = fc
      .array(
        fc.constantFrom(
          '{',
          '}',
          '[',
          ']',
          '"',
          '\\',
          ':',
          ',',
          '"a"',
          '"a":',
          '1',
          'null',
          ' ',
          'true',
          '\\"',
          'é',
          '\\u0061',
        ),
        {
          maxLength: 80,
        },
      )
      .map((parts) => parts.join(''));
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 200, unit: 'binary' }), jsonish), (text) => {
        expectWithinLimits(tryDecode(CODECS.smallJson, text), SMALL_LIMITS);
        receiveAnyway(CODECS.json, text);
      }),
      { numRuns: RUNS },
    );
  });
});

describe('msgpack decoder, header token streams', () => {
  test('streams of container and length headers decode or fail with FrameDecodeError, within the limits', () => {
    const token = fc.oneof(
      fc.constantFrom(
        [0x81],
        [0x8f],
        [0x91],
        [0x9f],
        [0x80],
        [0x90],
        [0xa1, 0x61],
        [0xa0],
        [0xc0],
        [0xc4, 0x02, 0x01, 0x02],
        [0xc4, 0xff],
        [0xc6, 0xff, 0xff, 0xff, 0xff],
        [0xdb, 0xff, 0xff, 0xff, 0xff],
        [0xdc, 0x00, 0x03],
        [0xdd, 0x7f, 0xff, 0xff, 0xff],
        [0xde, 0x00, 0x02],
        [0xdf, 0xff, 0xff, 0xff, 0xff],
        [0xd9, 0x03, 0x61, 0x62, 0x63],
        [0xd6, 0xff, 0, 0, 0, 0],
      ),
      fc.uint8Array({ maxLength: 4 }).map((bytes) => Array.from(bytes)),
    );
    fc.assert(
      fc.property(fc.array(token, { maxLength: 60 }), (tokens) => {
        const frame = new Uint8Array(tokens.flat());
        expectWithinLimits(tryDecode(CODECS.smallMsgpack, frame), SMALL_LIMITS);
        receiveAnyway(CODECS.msgpack, frame);
      }),
      { numRuns: RUNS },
    );
  });
});
