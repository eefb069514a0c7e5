import { describe, expect, test } from 'vitest';
import { waitFor } from './wait-for.ts';

describe('waitFor', () => {
  test('resolves with the first truthy value of the predicate', async () => {
    let calls = 0;
    const value = await waitFor(() => (++calls >= 3 ? { calls } : undefined), { intervalMs: 1 });
    expect(value).toEqual({ calls: 3 });
  });

  test('0, an empty string, null and false all mean "not yet"', async () => {
    const values: unknown[] = [0, '', null, false, undefined, 'done'];
    let at = 0;
    expect(await waitFor(() => values[at++], { intervalMs: 1 })).toBe('done');
  });

  test('a predicate that throws is polled again, and the last error is the cause of a timeout', async () => {
    let calls = 0;
    expect(
      await waitFor(
        () => {
          if (++calls < 3) throw new Error('not listening yet');
          return true;
        },
        { intervalMs: 1 },
      ),
    ).toBe(true);
    const failure = await waitFor(
      () => {
        throw new Error('still not listening');
      },
      { timeoutMs: 30, intervalMs: 5, what: 'the socket' },
    ).catch((error: unknown) => error as Error);
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toMatch(/^timed out waiting for the socket after 30 ms/);
    expect(((failure as Error).cause as Error).message).toBe('still not listening');
  });

  test('gives up after timeoutMs, naming what it waited for', async () => {
    const started = performance.now();
    await expect(waitFor(() => false, { timeoutMs: 50, what: 'nothing' })).rejects.toThrow(
      'timed out waiting for nothing after 50 ms',
    );
    expect(performance.now() - started).toBeGreaterThanOrEqual(50);
  });
});
