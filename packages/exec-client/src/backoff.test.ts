import { describe, expect, test } from 'vitest';
import { reconnectDelayMs } from './backoff.ts';

describe('reconnectDelayMs', () => {
  test('the first attempt is immediate, then the pause doubles up to the cap', () => {
    const delays = Array.from({ length: 8 }, (_, attempt) =>
      reconnectDelayMs(attempt, { initialMs: 100, maxMs: 2_000 }),
    );
    expect(delays).toEqual([0, 100, 200, 400, 800, 1600, 2000, 2000]);
  });

  test('jitter stays within its fraction and under the cap', () => {
    const low = reconnectDelayMs(3, { initialMs: 100, maxMs: 2_000, jitter: 0.2, random: () => 0 });
    const high = reconnectDelayMs(3, { initialMs: 100, maxMs: 2_000, jitter: 0.2, random: () => 0.999999 });
    expect([low, high]).toEqual([320, 480]);
    expect(reconnectDelayMs(40, { initialMs: 100, maxMs: 2_000, jitter: 0.5, random: () => 0.999999 })).toBe(
      2_000,
    );
  });
});
