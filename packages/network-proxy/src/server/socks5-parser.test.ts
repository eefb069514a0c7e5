import { describe, expect, test } from 'vitest';
import {
  isSocksError,
  parseSocksGreeting,
  parseSocksRequest,
  SOCKS_REPLY,
  socksReply,
} from './socks5-parser.ts';

/** Feeds `bytes` one byte at a time; every strict prefix must be `incomplete`. */
function feedByteByByte<T>(bytes: number[], parse: (buf: Uint8Array) => T): T {
  for (let n = 0; n < bytes.length; n++) expect(parse(Uint8Array.from(bytes.slice(0, n)))).toBe('incomplete');
  return parse(Uint8Array.from(bytes));
}

describe('parseSocksGreeting', () => {
  test('parses a fragmented greeting', () => {
    expect(feedByteByByte([5, 2, 0, 2], parseSocksGreeting)).toEqual({ methods: [0, 2], length: 4 });
  });

  test('rejects other versions and empty method lists', () => {
    const v4 = parseSocksGreeting(Uint8Array.from([4, 1, 0]));
    expect(v4 !== 'incomplete' && isSocksError(v4) && v4.error).toBe('version');
    const empty = parseSocksGreeting(Uint8Array.from([5, 0]));
    expect(empty !== 'incomplete' && isSocksError(empty) && empty.error).toBe('malformed');
  });
});

describe('parseSocksRequest', () => {
  test('domain name', () => {
    const name = [...Buffer.from('allowed.test')];
    const bytes = [5, 1, 0, 3, name.length, ...name, 0x1f, 0x90];
    expect(feedByteByByte(bytes, parseSocksRequest)).toEqual({
      command: 1,
      host: 'allowed.test',
      port: 8080,
      length: bytes.length,
    });
  });

  test('IPv4 and IPv6 literals', () => {
    expect(parseSocksRequest(Uint8Array.from([5, 1, 0, 1, 127, 0, 0, 1, 0, 80]))).toMatchObject({
      host: '127.0.0.1',
      port: 80,
    });
    const v6 = [5, 1, 0, 4, ...new Array(15).fill(0), 1, 1, 0xbb];
    expect(feedByteByByte(v6, parseSocksRequest)).toMatchObject({ host: '0:0:0:0:0:0:0:1', port: 443 });
  });

  test('trailing bytes are not consumed', () => {
    const parsed = parseSocksRequest(Uint8Array.from([5, 1, 0, 1, 1, 2, 3, 4, 0, 80, 0x47, 0x45]));
    expect(parsed).toMatchObject({ length: 10 });
  });

  test('unknown address types answer 0x08', () => {
    const parsed = parseSocksRequest(Uint8Array.from([5, 1, 0, 9, 0, 0]));
    expect(parsed).toEqual({ error: 'addressType', reply: SOCKS_REPLY.addressTypeNotSupported });
  });
});

describe('socksReply', () => {
  test('encodes IPv4, IPv6 and the unknown address', () => {
    expect([...socksReply(0, { address: '127.0.0.1', port: 1080 })]).toEqual([
      5, 0, 0, 1, 127, 0, 0, 1, 4, 56,
    ]);
    expect([...socksReply(2)]).toEqual([5, 2, 0, 1, 0, 0, 0, 0, 0, 0]);
    const v6 = socksReply(0, { address: '::1', port: 1 });
    expect(v6.length).toBe(22);
    expect(v6[3]).toBe(4);
    expect(v6[19]).toBe(1);
  });
});
