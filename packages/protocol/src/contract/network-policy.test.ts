import { describe, expect, test } from 'vitest';
import { ExecError } from '../errors.ts';
import { toNetworkDecision } from './network-policy.ts';

describe('toNetworkDecision', () => {
  test('a bare verdict becomes a decision without a reason', () => {
    expect(toNetworkDecision('allow')).toEqual({ type: 'allow' });
    expect(toNetworkDecision('deny')).toEqual({ type: 'deny' });
    expect(toNetworkDecision('ask')).toEqual({ type: 'ask' });
  });

  test('a decision keeps a non-empty reason, drops an empty one, and an allow never has one', () => {
    expect(toNetworkDecision({ type: 'deny', reason: 'no' })).toEqual({ type: 'deny', reason: 'no' });
    expect(toNetworkDecision({ type: 'ask', reason: '' })).toEqual({ type: 'ask' });
    expect(toNetworkDecision({ type: 'allow', reason: 'yes' })).toEqual({ type: 'allow' });
  });

  test('anything else is a protocol error', () => {
    for (const answer of ['maybe', undefined, null, 42, { type: 'perhaps' }, {}]) {
      let thrown: unknown;
      try {
        toNetworkDecision(answer);
      } catch (error) {
        thrown = error;
      }
      expect(ExecError.is(thrown) && thrown.code).toBe('protocol');
    }
  });
});
