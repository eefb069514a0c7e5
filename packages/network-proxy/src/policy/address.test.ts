import { describe, expect, test } from 'vitest';
import { classifyAddress, expandIpv6, isLocalhostName, normalizeHost } from './address.ts';

describe('classifyAddress', () => {
  test.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'private'],
    ['100.64.0.1', 'private'],
    ['0.0.0.0', 'private'],
    ['224.0.0.1', 'private'],
    ['255.255.255.255', 'private'],
    ['::', 'private'],
    ['fe80::1', 'private'],
    ['fd00::1', 'private'],
    ['fc12:3456::1', 'private'],
    ['ff02::1', 'private'],
    ['::ffff:10.0.0.1', 'private'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['2002:c0a8:0101::1', 'private'],
    ['2001:db8::1', 'private'],
    ['172.32.0.1', 'public'],
    ['8.8.8.8', 'public'],
    ['1.1.1.1', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['::ffff:8.8.8.8', 'public'],
  ] as const)('%s is %s', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });

  test('rejects non-addresses', () => {
    expect(() => classifyAddress('example.com')).toThrow(TypeError);
  });
});

describe('expandIpv6', () => {
  test('expands compressed forms and dotted tails', () => {
    expect(expandIpv6('::1')).toEqual([0, 0, 0, 0, 0, 0, 0, 1]);
    expect(expandIpv6('fe80::1:2')).toEqual([0xfe80, 0, 0, 0, 0, 0, 1, 2]);
    expect(expandIpv6('::ffff:1.2.3.4')).toEqual([0, 0, 0, 0, 0, 0xffff, 0x102, 0x304]);
    expect(expandIpv6('1:2:3:4:5:6:7:8')).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });
});

describe('normalizeHost', () => {
  test.each([
    ['Example.COM', 'example.com'],
    ['example.com.', 'example.com'],
    ['[::1]', '::1'],
    ['[0:0:0:0:0:0:0:1]', '::1'],
    ['::ffff:127.0.0.1', '127.0.0.1'],
    ['127.1', '127.0.0.1'],
    ['0x7f.0.0.1', '127.0.0.1'],
    ['2130706433', '127.0.0.1'],
    ['bücher.example', 'xn--bcher-kva.example'],
    ['under_score.test', 'under_score.test'],
  ])('%s -> %s', (raw, expected) => {
    expect(normalizeHost(raw)).toBe(expected);
  });

  test.each(['', ' ', 'a b', 'a/b', 'user@host', 'a..b', '[::1', `${'a'.repeat(254)}`])(
    'rejects %j',
    (raw) => {
      expect(normalizeHost(raw)).toBeUndefined();
    },
  );
});

test('localhost names', () => {
  expect(isLocalhostName('localhost')).toBe(true);
  expect(isLocalhostName('app.localhost')).toBe(true);
  expect(isLocalhostName('localhost.example')).toBe(false);
});
