import { describe, expect, test } from 'vitest';
import { hostNameOf, isAllowedHost } from './host-check.ts';

describe('hostNameOf', () => {
  test.each([
    ['127.0.0.1:7878', '127.0.0.1'],
    ['LOCALHOST', 'localhost'],
    ['[::1]:80', '::1'],
    ['[::1]', '::1'],
    ['Execd.Agents.svc.:7878', 'execd.agents.svc'],
  ])('%s -> %s', (header, name) => {
    expect(hostNameOf(header)).toBe(name);
  });

  test.each(['', ':80', '[::1', '[nope]:1', 'a:b', 'a:1:2', 'a b', '::1', 'a/b', '[::1]x'])(
    'malformed %j',
    (header) => {
      expect(hostNameOf(header)).toBeUndefined();
    },
  );
});

describe('isAllowedHost', () => {
  test('IP literals and localhost names are always allowed', () => {
    for (const host of ['127.0.0.1:1', '10.1.2.3', '[::1]:9', '[fe80::1]', 'localhost:7878', 'a.localhost'])
      expect(isAllowedHost(host, [])).toBe(true);
  });

  test('any other name only when configured (exact, or .domain for it and names under it)', () => {
    expect(isAllowedHost('evil.example:7878', [])).toBe(false);
    expect(isAllowedHost('localhost.evil.example', [])).toBe(false);
    expect(isAllowedHost('execd.svc:7878', ['EXECD.svc'])).toBe(true);
    expect(isAllowedHost('a.execd.svc', ['execd.svc'])).toBe(false);
    expect(isAllowedHost('a.agents.svc', ['.agents.svc'])).toBe(true);
    expect(isAllowedHost('agents.svc', ['.agents.svc'])).toBe(true);
    expect(isAllowedHost('evilagents.svc', ['.agents.svc'])).toBe(false);
  });

  test('a missing or malformed Host is refused', () => {
    expect(isAllowedHost(undefined, ['x'])).toBe(false);
    expect(isAllowedHost('', [''])).toBe(false);
    expect(isAllowedHost('x:port', ['x'])).toBe(false);
  });
});
