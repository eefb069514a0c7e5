import { encode } from '@msgpack/msgpack';
import { describe, expect, test } from 'vitest';
import { FrameDecodeError, RpcError } from '../errors.ts';
import { createMsgpackCodec } from './index.ts';
import { MAX_NESTING_DEPTH, MAX_VALUES_PER_MESSAGE } from './limits.ts';

const codec = createMsgpackCodec();
const bytes = (...parts: (number | number[] | Uint8Array)[]): Uint8Array =>
  new Uint8Array(parts.flatMap((p) => (typeof p === 'number' ? [p] : Array.from(p))));
const str = (text: string): number[] => {
  const b = new TextEncoder().encode(text);
  return [0xa0 | b.length, ...b];
};

function decodeError(fn: () => unknown): FrameDecodeError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(FrameDecodeError);
    expect(RpcError.is(error) && error.rpcCode).toBe(-32600);
    return error as FrameDecodeError;
  }
  throw new Error('expected a FrameDecodeError');
}

describe('msgpack header walker refuses impossible lengths before allocating', () => {
  test.each([
    ['bin32 claiming 4 GiB', bytes(0x81, str('a'), 0xc6, 0xff, 0xff, 0xff, 0xff)],
    ['bin16 longer than the frame', bytes(0x81, str('a'), 0xc5, 0x01, 0x00, 1, 2, 3)],
    ['str32 claiming 4 GiB', bytes(0x81, str('a'), 0xdb, 0xff, 0xff, 0xff, 0xff)],
    ['array32 claiming 4 billion items', bytes(0x81, str('a'), 0xdd, 0xff, 0xff, 0xff, 0xff)],
    ['map32 claiming 4 billion entries', bytes(0xdf, 0xff, 0xff, 0xff, 0xff)],
    ['array16 with more items than bytes', bytes(0x81, str('a'), 0xdc, 0x00, 0x10, 1, 2, 3)],
    ['fixmap with a missing value', bytes(0x81, str('a'))],
    ['truncated uint32', bytes(0x81, str('a'), 0xce, 0x00)],
    ['truncated float64', bytes(0x81, str('a'), 0xcb, 0, 0, 0)],
  ])('%s', (_name, frame) => {
    decodeError(() => codec.decodeValue(frame));
  });

  test('a bin over maxBinLength is refused from its header alone', () => {
    const limited = createMsgpackCodec({ maxBinLength: 4 });
    expect(limited.decodeValue(bytes(0xc4, 4, 1, 2, 3, 4))).toEqual(new Uint8Array([1, 2, 3, 4]));
    const error = decodeError(() => limited.decodeValue(bytes(0xc4, 5, 1, 2, 3, 4, 5)));
    expect(error.message).toMatch(/bin of 5 bytes exceeds 4/);
  });

  test('a string over maxStringLength is refused', () => {
    const limited = createMsgpackCodec({ maxStringLength: 3 });
    expect(limited.decodeValue(bytes(str('abc')))).toBe('abc');
    decodeError(() => limited.decodeValue(bytes(str('abcd'))));
  });
});

describe('msgpack structure rules', () => {
  test('decodes every scalar type the protocol uses', () => {
    const value = {
      n: null,
      t: true,
      f: false,
      i: [0, 127, -1, -32, 200, -200, 70_000, -70_000, 2 ** 40, -(2 ** 40)],
      d: 1.5,
      s: 'é✓',
      b: new Uint8Array([0, 255]),
      e: [],
      o: {},
    };
    expect(codec.decodeValue(encode(value))).toEqual(value);
    expect(codec.decodeValue(bytes(0xca, 0x3f, 0xc0, 0, 0))).toBe(1.5); // float32
    expect(codec.decodeValue(bytes(0xcf, 0, 0, 0, 1, 0, 0, 0, 0))).toBe(2 ** 32); // uint64
  });

  test.each([
    ['duplicate string keys', bytes(0x82, str('a'), 1, str('a'), 2), /duplicate msgpack map key `a`/],
    ['duplicate keys in a nested map', bytes(0x81, str('p'), 0x82, str('x'), 1, str('x'), 2), /duplicate/],
    ['an integer key', bytes(0x81, 0x01, 0x02), /map keys must be strings/],
    ['a bin key', bytes(0x81, 0xc4, 1, 0x61, 0x02), /map keys must be strings/],
    ['a map key', bytes(0x81, 0x80, 0x02), /map keys must be strings/],
    ['a key that is not UTF-8', bytes(0x81, 0xa1, 0xff, 0x01), /UTF-8/],
    ['an ext value (timestamp)', bytes(0x81, str('a'), 0xd6, 0xff, 0, 0, 0, 0), /unsupported type byte 0xd6/],
    ['ext8', bytes(0xc7, 1, 5, 0), /unsupported/],
    ['the never-used byte 0xc1', bytes(0xc1), /unsupported type byte 0xc1/],
    ['trailing bytes', bytes(0x80, 0x80), /trailing bytes/],
    ['an empty frame', bytes(), /empty frame/],
    ['a __proto__ key', bytes(0x81, str('__proto__'), 0x80), /__proto__/],
  ])('refuses %s', (_name, frame, message) => {
    expect(decodeError(() => codec.decodeValue(frame)).message).toMatch(message);
  });

  test('the same key in sibling maps is fine', () => {
    expect(codec.decodeValue(encode({ x: [{ a: 1 }, { a: 2 }], a: { a: 3 } }))).toEqual({
      x: [{ a: 1 }, { a: 2 }],
      a: { a: 3 },
    });
  });

  test('accepts 127 nested containers and refuses 128 (the JSON codec limit)', () => {
    const nested = (depth: number) => bytes(0x81, str('p'), Array(depth - 1).fill(0x91), 0xc0);
    expect(MAX_NESTING_DEPTH).toBe(127);
    expect(() => codec.decodeValue(nested(127))).not.toThrow();
    decodeError(() => codec.decodeValue(nested(128)));
    decodeError(() => codec.decodeValue(new Uint8Array(1_000_000).fill(0x91)));
  });

  test('counts values as the JSON codec does: root, elements and map values, not keys', () => {
    const limited = createMsgpackCodec({ maxValues: 3 });
    expect(limited.decodeValue(encode({ a: 1, b: 2 }))).toEqual({ a: 1, b: 2 });
    decodeError(() => limited.decodeValue(encode({ a: 1, b: 2, c: 3 })));
    const message = (n: number) => encode({ id: 1, method: 'm', params: new Array(n).fill(0) });
    expect(codec.decode(message(MAX_VALUES_PER_MESSAGE - 4))).toMatchObject({ kind: 'request' });
    decodeError(() => codec.decode(message(MAX_VALUES_PER_MESSAGE - 3)));
  });

  test('the frame-size limit is checked before anything else', () => {
    const small = createMsgpackCodec({ maxFrameBytes: 8 });
    decodeError(() => small.decodeValue(encode({ a: 'x'.repeat(10) })));
  });

  test('bin values decode to Uint8Array and Node Buffers encode as bin', () => {
    const frame = codec.encode({ kind: 'notification', method: 'm', params: { chunk: Buffer.from('hi') } });
    expect(Array.from(frame)).toContain(0xc4);
    const decoded = codec.decodeValue(frame) as { params: { chunk: Uint8Array } };
    expect(decoded.params.chunk).toBeInstanceOf(Uint8Array);
    expect(Array.from(decoded.params.chunk)).toEqual([104, 105]);
  });

  test('a text frame given to the msgpack codec is read as its UTF-8 bytes', () => {
    decodeError(() => codec.decode('{"id":1}'));
  });

  test('encodeText is unsupported', () => {
    expect(() => codec.encodeText({ kind: 'response', id: 1, result: null })).toThrow(
      expect.objectContaining({ code: 'unsupported' }),
    );
  });
});
