import { afterEach, describe, expect, test, vi } from 'vitest';
import { ChangeSignal } from './change-signal.ts';

afterEach(() => {
  vi.useRealTimers();
});

describe('ChangeSignal', () => {
  test('one notify() wakes every current waiter with true, and none is left behind', async () => {
    const signal = new ChangeSignal();
    const waits = [signal.wait(60_000), signal.wait(60_000)];
    expect(signal.waiterCount).toBe(2);
    signal.notify();
    await expect(Promise.all(waits)).resolves.toEqual([true, true]);
    expect(signal.waiterCount).toBe(0);
  });

  test('a notify() before the wait is not remembered: the wait times out with false', async () => {
    vi.useFakeTimers();
    const signal = new ChangeSignal();
    signal.notify();
    const wait = signal.wait(1_000);
    await vi.advanceTimersByTimeAsync(1_000);
    await expect(wait).resolves.toBe(false);
    expect(signal.waiterCount).toBe(0);
  });

  test('a timeout above setTimeout’s limit is clamped, not fired at once', async () => {
    vi.useFakeTimers();
    const signal = new ChangeSignal();
    let settled = false;
    const wait = signal.wait(Number.MAX_SAFE_INTEGER).then((woken) => {
      settled = true;
      return woken;
    });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(settled).toBe(false);
    signal.notify();
    await expect(wait).resolves.toBe(true);
  });

  test('an abort rejects with the signal’s reason and removes the waiter', async () => {
    const signal = new ChangeSignal();
    const controller = new AbortController();
    const reason = new Error('stop');
    const wait = signal.wait(60_000, controller.signal);
    controller.abort(reason);
    await expect(wait).rejects.toBe(reason);
    expect(signal.waiterCount).toBe(0);
  });

  test('an already aborted signal rejects at once without registering', async () => {
    const signal = new ChangeSignal();
    const reason = new Error('gone');
    await expect(signal.wait(60_000, AbortSignal.abort(reason))).rejects.toBe(reason);
    expect(signal.waiterCount).toBe(0);
  });
});
