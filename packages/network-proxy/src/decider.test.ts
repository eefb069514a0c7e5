import { ExecError, NOOP_LOGGER } from '@execd/protocol';
import type { NetworkRequestInfo } from '@execd/protocol/contract';
import { describe, expect, test } from 'vitest';
import { DeciderCache, type NetworkDecider, validateDeciderTimeout } from './decider.ts';

const request: NetworkRequestInfo = { protocol: 'https', host: 'example.com', port: 443 };

describe('validateDeciderTimeout', () => {
  test('zero is refused with the original message', () => {
    try {
      validateDeciderTimeout(0);
      expect.unreachable();
    } catch (error) {
      expect(ExecError.is(error) && error.code).toBe('invalidParams');
      // The original's exact text is the contract here.
      expect((error as Error).message).toBe('network policy decision callback timeout must be nonzero');
    }
  });

  test.each([-1, 1.5, Number.NaN, 2 ** 31])('%d is refused', (value) => {
    expect(() => validateDeciderTimeout(value)).toThrow(
      expect.toSatisfy((e) => ExecError.is(e) && e.code === 'invalidParams'),
    );
  });

  test('positive integers pass', () => {
    expect(validateDeciderTimeout(1)).toBe(1);
  });
});

describe('DeciderCache', () => {
  test.each([
    ['allow', { kind: 'allow' }],
    [{ type: 'allow' }, { kind: 'allow' }],
    ['deny', { kind: 'deny', reason: 'deciderDenied', detail: undefined }],
    [
      { type: 'deny', reason: 'no' },
      { kind: 'deny', reason: 'deciderDenied', detail: 'no' },
    ],
    [
      { type: 'ask', reason: 'needs a person' },
      { kind: 'deny', reason: 'deciderAsk', detail: 'needs a person' },
    ],
    ['maybe', { kind: 'deny', reason: 'deciderFailed' }],
  ] as const)('answer %j -> %j', async (answer, expected) => {
    const cache = new DeciderCache(async () => answer as never, 5_000, NOOP_LOGGER);
    expect(await cache.decide(request)).toMatchObject(expected);
    cache.close();
  });

  test('answers are cached per host:port and concurrent asks share one call', async () => {
    const asked: NetworkRequestInfo[] = [];
    let release: (() => void) | undefined;
    const decider: NetworkDecider = async (r) => {
      asked.push(r);
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      return 'allow';
    };
    const cache = new DeciderCache(decider, 5_000, NOOP_LOGGER);
    const first = cache.decide(request);
    const second = cache.decide({ ...request, protocol: 'socks5' });
    await Promise.resolve();
    release?.();
    expect(await first).toEqual({ kind: 'allow' });
    expect(await second).toEqual({ kind: 'allow' });
    expect(await cache.decide(request)).toEqual({ kind: 'allow' });
    expect(asked).toHaveLength(1);
    expect(cache.cachedCount).toBe(1);
    const other = cache.decide({ ...request, port: 80 });
    await Promise.resolve();
    release?.();
    await other;
    expect(asked).toHaveLength(2);
    cache.close();
  });

  test('a decider that never answers is denied at the timeout, and a late answer is cached', async () => {
    let answer: ((value: 'allow') => void) | undefined;
    const cache = new DeciderCache(
      () =>
        new Promise((resolve) => {
          answer = resolve;
        }),
      50,
      NOOP_LOGGER,
    );
    expect(await cache.decide(request)).toMatchObject({ kind: 'deny', reason: 'deciderTimeout' });
    expect(cache.cachedCount).toBe(0);
    answer?.('allow');
    await cache.decide({ ...request, port: 1 }).catch(() => {});
    expect(await cache.decide(request)).toEqual({ kind: 'allow' });
    cache.close();
  });

  test('a throwing decider denies (deciderFailed) and is asked again next time', async () => {
    let calls = 0;
    const cache = new DeciderCache(
      async () => {
        calls++;
        throw new Error('client gone');
      },
      5_000,
      NOOP_LOGGER,
    );
    expect(await cache.decide(request)).toMatchObject({
      kind: 'deny',
      reason: 'deciderFailed',
      detail: 'client gone',
    });
    expect(await cache.decide(request)).toMatchObject({ reason: 'deciderFailed' });
    expect(calls).toBe(2);
    cache.close();
  });

  test('close denies waiting requests with proxyClosed and aborts the decider', async () => {
    let signal: AbortSignal | undefined;
    const cache = new DeciderCache(
      (_r, context) => {
        signal = context.cancelSignal;
        return new Promise(() => {});
      },
      60_000,
      NOOP_LOGGER,
    );
    const pending = cache.decide(request);
    cache.close();
    expect(await pending).toMatchObject({ kind: 'deny', reason: 'proxyClosed' });
    expect(signal?.aborted).toBe(true);
    expect(await cache.decide(request)).toMatchObject({ reason: 'proxyClosed' });
  });
});
