import { describe, expect, test } from 'vitest';
import { createJsonCodec, createMsgpackCodec, sniffCodec } from './index.ts';

describe('sniffCodec', () => {
  const message = { kind: 'request', id: 1, method: 'environment/status', params: {} } as const;

  test('text frames are JSON', () => {
    expect(sniffCodec('{"id":1}', false)).toBe('json');
    expect(sniffCodec(new TextEncoder().encode('{"id":1}'), false)).toBe('json');
  });

  test('binary frames are msgpack unless they start with `{` (the original clients send JSON that way)', () => {
    expect(sniffCodec(createMsgpackCodec().encode(message), true)).toBe('msgpack');
    expect(sniffCodec(createJsonCodec().encode(message), true)).toBe('json');
    expect(sniffCodec(new TextEncoder().encode(' \r\n\t{"id":1}'), true)).toBe('json');
    expect(sniffCodec(new Uint8Array([0xde, 0x00, 0x01]), true)).toBe('msgpack');
    expect(sniffCodec(new Uint8Array(), true)).toBe('msgpack');
  });
});

describe('encoding failures', () => {
  test('are RpcError internal in both codecs', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const codec of [createJsonCodec(), createMsgpackCodec()]) {
      for (const params of [cyclic, { n: 10n }]) {
        expect(() => codec.encode({ kind: 'notification', method: 'm', params })).toThrow(
          expect.objectContaining({ code: 'internal', rpcCode: -32603 }),
        );
      }
    }
  });
});
