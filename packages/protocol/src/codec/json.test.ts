import { describe, expect, test } from 'vitest';
import { ExecError, FrameDecodeError, RpcError } from '../errors.ts';
import { createJsonCodec } from './index.ts';
import { MAX_NESTING_DEPTH, MAX_VALUES_PER_MESSAGE } from './limits.ts';

const codec = createJsonCodec();

/** Runs `fn` and returns the FrameDecodeError it throws (failing on anything else). */
function decodeError(fn: () => unknown): FrameDecodeError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(FrameDecodeError);
    expect(RpcError.is(error) && error.code).toBe('invalidRequest');
    expect(RpcError.is(error) && error.rpcCode).toBe(-32600);
    return error as FrameDecodeError;
  }
  throw new Error('expected a FrameDecodeError');
}

describe('JSON scanner: strings and keys', () => {
  test.each([
    ['escaped quote in a key', '{"a\\"b":1,"a":2}', { 'a"b': 1, a: 2 }],
    ['escaped backslash before the closing quote', '{"a\\\\":1,"a":2}', { 'a\\': 1, a: 2 }],
    ['escaped backslash then escaped quote', '{"\\\\\\"":1}', { '\\"': 1 }],
    [
      'strings containing braces, brackets, commas and colons',
      '{"k":"{[,:]}","l":["}",":"]}',
      { k: '{[,:]}', l: ['}', ':'] },
    ],
    ['a value that looks like a key', '{"a":"b","b":"a"}', { a: 'b', b: 'a' }],
    ['empty containers', '{"a":{},"b":[],"c":[{}],"d":[[]]}', { a: {}, b: [], c: [{}], d: [[]] }],
    [
      'same key in sibling objects',
      '{"x":[{"a":1},{"a":2}],"y":{"a":3}}',
      { x: [{ a: 1 }, { a: 2 }], y: { a: 3 } },
    ],
    ['same key at different depths', '{"a":{"a":{"a":1}}}', { a: { a: { a: 1 } } }],
    ['unicode escapes', '{"\\u00e9":"\\u2713"}', { é: '✓' }],
    ['whitespace everywhere', ' \n{ "a" : [ 1 , true , null , "x" ] }\r\n', { a: [1, true, null, 'x'] }],
    ['numbers with exponents and signs', '{"a":[-1,1.5e3,0,-0.25E-2]}', { a: [-1, 1500, 0, -0.0025] }],
    ['a long key', `{"${'k'.repeat(10_000)}":1}`, { ['k'.repeat(10_000)]: 1 }],
  ])('%s', (_name, text, expected) => {
    expect(codec.decodeValue(text)).toEqual(expected);
    expect(codec.decodeValue(new TextEncoder().encode(text))).toEqual(expected);
  });

  test.each([
    ['plain', '{"method":"safe","method":"dangerous"}', 'method'],
    ['nested', '{"params":{"a":1,"b":2,"a":3}}', 'a'],
    ['after a nested object', '{"a":{"b":1},"a":2}', 'a'],
    ['after an array value', '{"a":[1,{"a":1}],"a":2}', 'a'],
    ['spelled with an escape', '{"a":1,"\\u0061":2}', 'a'],
    ['containing an escaped quote', '{"a\\"":1,"a\\"":2}', 'a"'],
    ['empty key', '{"":1,"":2}', ''],
  ])('refuses a duplicate key (%s) naming it as the original does', (_name, text, key) => {
    const error = decodeError(() => codec.decodeValue(text));
    expect(error.message).toBe(`duplicate JSON object key \`${key}\``);
  });
});

describe('JSON limits', () => {
  // `{"id":1,"method":"m","params":[...]}` holds n + 4 values: the root, id, method, params.
  const message = (elements: number) =>
    `{"id":1,"method":"m","params":[${Array.from({ length: elements }, () => '0').join(',')}]}`;

  test('accepts exactly 262,144 values and refuses one more, as the original', () => {
    expect(MAX_VALUES_PER_MESSAGE).toBe(262_144);
    expect(codec.decode(message(MAX_VALUES_PER_MESSAGE - 4))).toMatchObject({ kind: 'request' });
    const error = decodeError(() => codec.decode(message(MAX_VALUES_PER_MESSAGE - 3)));
    expect(error.message).toBe('JSON-RPC message exceeds the limit of 262144 JSON values');
  });

  test('refuses the compact-array amplification payload of the original test', () => {
    const text = `{"method":"probe","params":[${Array.from({ length: 2_097_137 }, () => '0').join(',')}]}`;
    expect(text.length).toBe(4_194_303);
    decodeError(() => codec.decode(text));
  });

  test('counts a large scalar string as one value', () => {
    const data = 'x'.repeat(MAX_VALUES_PER_MESSAGE + 1);
    expect(codec.decode(`{"method":"large","params":{"data":"${data}"}}`)).toEqual({
      kind: 'notification',
      method: 'large',
      params: { data },
    });
  });

  test('counts keys as no values', () => {
    const limited = createJsonCodec({ maxValues: 3 });
    expect(limited.decodeValue('{"a":1,"b":2}')).toEqual({ a: 1, b: 2 });
    decodeError(() => limited.decodeValue('{"a":1,"b":2,"c":3}'));
  });

  test('accepts 127 nested containers and refuses 128, as the original', () => {
    const nested = (depth: number) =>
      `{"method":"m","params":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
    expect(MAX_NESTING_DEPTH).toBe(127);
    expect(codec.decode(nested(127))).toMatchObject({ kind: 'notification' });
    decodeError(() => codec.decode(nested(128)));
    // A deep document is refused while scanning, long before JSON.parse could recurse.
    decodeError(() => codec.decode('['.repeat(1_000_000)));
  });

  test('the frame-size limit is checked before anything else', () => {
    const small = createJsonCodec({ maxFrameBytes: 16 });
    expect(small.decodeValue('{"a":"123456"}')).toEqual({ a: '123456' });
    decodeError(() => small.decodeValue('{"a":"1234567890"}'));
    decodeError(() => small.decodeValue(new Uint8Array(17).fill(0x20)));
  });

  test('the string-length limit applies to values', () => {
    const small = createJsonCodec({ maxStringLength: 4 });
    expect(small.decodeValue('["abcd"]')).toEqual(['abcd']);
    decodeError(() => small.decodeValue('["abcde"]'));
  });

  test('refuses a limit that is not a positive integer', () => {
    expect(() => createJsonCodec({ maxValues: 0 })).toThrow(RangeError);
    expect(() => createJsonCodec({ maxDepth: 1.5 })).toThrow(RangeError);
  });
});

describe('JSON syntax errors are FrameDecodeErrors', () => {
  test.each([
    ['not json', 'not json'],
    ['trailing characters', '{"id":9,"method":"m"} x'],
    ['unterminated string', '{"a":"b'],
    ['unterminated key', '{"a'],
    ['bad escape in a key', '{"\\x":1}'],
    ['control character in a key', '{"a\nb":1}'],
    ['single quotes', "{'a':1}"],
    ['a comment', '{"a":1 /* c */}'],
    ['a trailing comma', '{"a":1,}'],
    ['unbalanced closers', '{"a":1}}'],
    ['empty', ''],
    ['NaN', '{"a":NaN}'],
    ['a BOM-less invalid UTF-8 byte', new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])],
    ['a lone continuation byte', new Uint8Array([0x5b, 0x80, 0x5d])],
  ])('%s', (_name, frame) => {
    decodeError(() => codec.decodeValue(frame));
  });
});

describe('JSON encoding', () => {
  test('writes bytes as standard padded base64, Node Buffers included', () => {
    const text = codec.encodeText({
      kind: 'notification',
      method: 'process/output',
      params: {
        a: new Uint8Array([104, 105, 10]),
        b: Buffer.from('hi\n'),
        c: Buffer.from('xhix').subarray(1, 3),
      },
    });
    expect(text).toBe('{"method":"process/output","params":{"a":"aGkK","b":"aGkK","c":"aGk="}}');
    expect(new TextDecoder().decode(codec.encode({ kind: 'response', id: 1, result: {} }))).toBe(
      '{"id":1,"result":{}}',
    );
  });

  test('leaves out undefined members and never writes a jsonrpc field', () => {
    expect(
      codec.encodeText({ kind: 'request', id: 'x', method: 'm', params: { a: undefined, b: null } }),
    ).toBe('{"id":"x","method":"m","params":{"b":null}}');
  });

  test('a FrameDecodeError is an ExecError', () => {
    expect(ExecError.is(decodeError(() => codec.decodeValue('{')))).toBe(true);
  });
});

describe('JSON encoding of byte fields (placeholder splicing)', () => {
  const placeholder = (n: number) => `\u0000execd-bytes:${n}\u0000`;
  const plain = (value: unknown): string =>
    JSON.stringify(value, function (this: Record<string, unknown>, key, v) {
      const raw = this[key];
      return raw instanceof Uint8Array ? Buffer.from(raw).toString('base64') : v;
    });

  test.each([
    [
      'many byte fields in order',
      { a: [new Uint8Array([1]), new Uint8Array([2, 3])], b: { c: new Uint8Array([4, 5, 6]) } },
    ],
    ['a string that equals a placeholder', { s: placeholder(0), b: new Uint8Array([1]) }],
    ['a string that equals the next placeholder', { b: new Uint8Array([1]), s: placeholder(1) }],
    [
      'a string ending like a placeholder after a quote',
      { s: `a"${placeholder(0)}`, b: new Uint8Array([9]) },
    ],
    ['placeholders in keys', { [placeholder(0)]: new Uint8Array([7]) }],
    ['an own __proto__ member', JSON.parse('{"__proto__":{"x":1},"b":"x"}') as unknown],
    ['empty bytes', { b: new Uint8Array() }],
  ])('%s encodes exactly as a plain replacer would', (_name, value) => {
    const text = codec.encodeText({ kind: 'notification', method: 'm', params: value });
    expect(text).toBe(plain({ method: 'm', params: value }));
    expect(JSON.parse(text)).toEqual(JSON.parse(plain({ method: 'm', params: value })));
  });
});
