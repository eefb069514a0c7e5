import { ExecError } from '@execd/protocol';
import { describe, expect, test } from 'vitest';
import { matchesDomainPattern, parseDomainPattern } from './domain-pattern.ts';
import { NetworkPolicy } from './network-policy.ts';

const isInvalidParams = (error: unknown): boolean => ExecError.is(error) && error.code === 'invalidParams';

describe('domain patterns', () => {
  test.each([
    ['example.com', 'example.com', 443, true],
    ['example.com', 'www.example.com', 443, false],
    ['*.npmjs.org', 'registry.npmjs.org', 443, true],
    ['*.npmjs.org', 'a.b.npmjs.org', 443, true],
    ['*.npmjs.org', 'npmjs.org', 443, false],
    ['*.npmjs.org', 'evilnpmjs.org', 443, false],
    ['**.github.com', 'github.com', 443, true],
    ['**.github.com', 'api.github.com', 443, true],
    ['example.com:8443', 'example.com', 8443, true],
    ['example.com:8443', 'example.com', 443, false],
    ['example.com:*', 'example.com', 1, true],
    ['*', 'anything.test', 80, true],
    ['*:443', 'anything.test', 80, false],
    ['[::1]:8080', '::1', 8080, true],
    ['::1', '::1', 9, true],
    ['10.0.0.5', '10.0.0.5', 22, true],
    ['EXAMPLE.com.', 'example.com', 80, true],
  ] as const)('%s matches %s:%d = %s', (pattern, host, port, expected) => {
    expect(matchesDomainPattern(parseDomainPattern(pattern), host, port)).toBe(expected);
  });

  test.each([
    '',
    'exa*mple.com',
    '*.10.0.0.1',
    'example.com:0',
    'example.com:70000',
    'example.com:http',
    '[::1',
    'a b',
  ])('rejects %j with invalidParams', (pattern) => {
    expect(() => parseDomainPattern(pattern)).toThrow(expect.toSatisfy(isInvalidParams));
  });
});

describe('NetworkPolicy.evaluate', () => {
  const policy = new NetworkPolicy({
    allowedDomains: ['*.npmjs.org', 'github.com', '10.0.0.5:22', 'localhost:9000', '*'],
    deniedDomains: ['evil.npmjs.org', '169.254.169.254'],
    loopbackPorts: [5432],
  });

  test('deny wins over every allow', () => {
    expect(policy.evaluate('evil.npmjs.org', 443)).toEqual({
      kind: 'deny',
      reason: 'denied',
      rule: 'deny:evil.npmjs.org',
    });
    expect(policy.evaluate('169.254.169.254', 80)).toMatchObject({ kind: 'deny', reason: 'denied' });
  });

  test('allow patterns match in order', () => {
    expect(policy.evaluate('registry.npmjs.org', 443)).toEqual({ kind: 'allow', rule: 'allow:*.npmjs.org' });
    expect(policy.evaluate('example.org', 443)).toEqual({ kind: 'allow', rule: 'allow:*' });
  });

  test('local literals need loopbackPorts or an exact entry, even under "*"', () => {
    expect(policy.evaluate('127.0.0.1', 5432)).toEqual({ kind: 'allow', rule: 'loopbackPorts' });
    expect(policy.evaluate('::1', 5432)).toEqual({ kind: 'allow', rule: 'loopbackPorts' });
    expect(policy.evaluate('localhost', 5432)).toEqual({ kind: 'allow', rule: 'loopbackPorts' });
    expect(policy.evaluate('localhost', 9000)).toEqual({ kind: 'allow', rule: 'allow:localhost:9000' });
    expect(policy.evaluate('10.0.0.5', 22)).toEqual({ kind: 'allow', rule: 'allow:10.0.0.5:22' });
    expect(policy.evaluate('127.0.0.1', 22)).toEqual({
      kind: 'deny',
      reason: 'notAllowedLocal',
      rule: 'local-address',
    });
    expect(policy.evaluate('10.0.0.6', 22)).toMatchObject({ reason: 'notAllowedLocal' });
    expect(policy.evaluate('192.168.0.1', 80)).toMatchObject({ reason: 'notAllowedLocal' });
  });

  test('no match is left to the decider', () => {
    const strict = new NetworkPolicy({ allowedDomains: ['github.com'] });
    expect(strict.evaluate('example.com', 443)).toEqual({ kind: 'noMatch' });
    expect(new NetworkPolicy().evaluate('example.com', 443)).toEqual({ kind: 'noMatch' });
  });

  test('allowLocalAddresses lets allow patterns other than "*" cover local destinations', () => {
    const open = new NetworkPolicy({ allowedDomains: ['**.localhost'], allowLocalAddresses: true });
    expect(open.evaluate('app.localhost', 80)).toEqual({ kind: 'allow', rule: 'allow:**.localhost' });
    const closed = new NetworkPolicy({ allowedDomains: ['**.localhost'] });
    expect(closed.evaluate('app.localhost', 80)).toMatchObject({ reason: 'notAllowedLocal' });
  });

  test('"*" never opens local destinations, even with allowLocalAddresses (README step 2)', () => {
    const open = new NetworkPolicy({ allowedDomains: ['*'], allowLocalAddresses: true });
    for (const host of ['127.0.0.1', '::1', 'localhost', '169.254.169.254', 'fe80::1', '192.168.0.1']) {
      expect(open.evaluate(host, 80)).toEqual({
        kind: 'deny',
        reason: 'notAllowedLocal',
        rule: 'local-address',
      });
    }
    expect(open.evaluate('example.com', 80)).toEqual({ kind: 'allow', rule: 'allow:*' });
  });

  test('a local destination no rule allows is denied, not left to the decider', () => {
    expect(new NetworkPolicy({ allowLocalAddresses: true }).evaluate('192.168.0.1', 80)).toEqual({
      kind: 'deny',
      reason: 'notAllowedLocal',
      rule: 'local-address',
    });
  });

  test('rejects bad loopback ports', () => {
    expect(() => new NetworkPolicy({ loopbackPorts: [0] })).toThrow(expect.toSatisfy(isInvalidParams));
    expect(() => new NetworkPolicy({ loopbackPorts: [1.5] })).toThrow(expect.toSatisfy(isInvalidParams));
  });
});

describe('NetworkPolicy.checkAddresses (DNS rebinding)', () => {
  const policy = new NetworkPolicy({ allowedDomains: ['*', '10.0.0.5'], loopbackPorts: [8080] });

  test('public addresses pass', () => {
    expect(policy.checkAddresses(['93.184.216.34', '2606:2800:220:1::1'], 443)).toEqual({ ok: true });
  });

  test('one private address among public ones fails the whole name', () => {
    expect(policy.checkAddresses(['93.184.216.34', '192.168.1.1'], 443)).toEqual({
      ok: false,
      address: '192.168.1.1',
      rule: 'resolved-local-address:192.168.1.1',
    });
  });

  test('allowLocalAddresses opens resolved local addresses only for names not allowed by "*"', () => {
    const open = new NetworkPolicy({ allowedDomains: ['*', 'db.corp.test'], allowLocalAddresses: true });
    const byStar = { host: 'anything.test', rule: 'allow:*' };
    expect(open.checkAddresses(['127.0.0.1'], 80, byStar)).toMatchObject({ ok: false });
    expect(open.checkAddresses(['169.254.169.254'], 80, byStar)).toMatchObject({ ok: false });
    // `*` is listed first, so it is the recorded rule; the specific pattern still counts.
    expect(open.checkAddresses(['10.0.0.7'], 5432, { host: 'db.corp.test', rule: 'allow:*' })).toEqual({
      ok: true,
    });
    expect(open.checkAddresses(['10.0.0.7'], 80, { host: 'asked.test', rule: 'decider' })).toEqual({
      ok: true,
    });
    expect(open.checkAddresses(['10.0.0.7'], 80)).toMatchObject({ ok: false });
  });

  test('loopback passes only on a loopback port; explicit addresses pass', () => {
    expect(policy.checkAddresses(['127.0.0.1'], 8080)).toEqual({ ok: true });
    expect(policy.checkAddresses(['127.0.0.1'], 8081)).toMatchObject({ ok: false });
    expect(policy.checkAddresses(['10.0.0.5'], 443)).toEqual({ ok: true });
  });
});
