import { decodeParams } from '@execd/protocol';
import { expect, test } from 'vitest';
import { type NetworkDecisionRecord, toPolicyDecisionNotification } from './records.ts';

const AT_MS = Date.UTC(2025, 0, 31, 12, 0, 0);

test('a denial maps to the wire form: protocol names, reason and timestamp', () => {
  const records: NetworkDecisionRecord[] = [
    {
      protocol: 'http',
      host: 'a.test',
      port: 80,
      decision: 'deny',
      rule: 'deny:a.test',
      reason: 'denied',
      timestampMs: AT_MS,
    },
    {
      protocol: 'https',
      host: 'b.test',
      port: 443,
      decision: 'deny',
      rule: 'no-match',
      reason: 'notAllowed',
      timestampMs: AT_MS,
    },
    {
      protocol: 'socks5',
      host: '10.0.0.1',
      port: 22,
      decision: 'deny',
      rule: 'local-address',
      reason: 'notAllowedLocal',
      timestampMs: AT_MS,
    },
  ];
  expect(records.map((record) => toPolicyDecisionNotification('p1', record))).toEqual([
    {
      processId: 'p1',
      request: { protocol: 'http', host: 'a.test', port: 80 },
      decision: 'deny',
      rule: 'deny:a.test',
      reason: 'denied',
      timestamp: '2025-01-31T12:00:00.000Z',
    },
    {
      processId: 'p1',
      request: { protocol: 'https_connect', host: 'b.test', port: 443 },
      decision: 'deny',
      rule: 'no-match',
      reason: 'notAllowed',
      timestamp: '2025-01-31T12:00:00.000Z',
    },
    {
      processId: 'p1',
      request: { protocol: 'socks5_tcp', host: '10.0.0.1', port: 22 },
      decision: 'deny',
      rule: 'local-address',
      reason: 'notAllowedLocal',
      timestamp: '2025-01-31T12:00:00.000Z',
    },
  ]);
});

test('an allow has no reason, and the result validates as network/policyDecision params', () => {
  const params = toPolicyDecisionNotification('p2', {
    protocol: 'https',
    host: 'registry.npmjs.org',
    port: 443,
    decision: 'allow',
    rule: 'allow:*.npmjs.org',
    timestampMs: AT_MS,
  });
  expect(params).toEqual({
    processId: 'p2',
    request: { protocol: 'https_connect', host: 'registry.npmjs.org', port: 443 },
    decision: 'allow',
    rule: 'allow:*.npmjs.org',
    timestamp: '2025-01-31T12:00:00.000Z',
  });
  expect('reason' in params).toBe(false);
  expect(decodeParams('network/policyDecision', params)).toEqual(params);
});
