import { waitFor } from '@execd/test-kit';
import { describe, expect, test } from 'vitest';
import type { InputWaitReason } from './input-wait.ts';
import { InputWaitWatcher } from './input-wait-watcher.ts';

/** A probe the test answers by hand: each call waits for `answer()`. */
function manualProbe(): {
  probe: () => Promise<InputWaitReason>;
  calls: number;
  answer(reason: InputWaitReason): void;
} {
  const pending: ((reason: InputWaitReason) => void)[] = [];
  const state = {
    calls: 0,
    probe: () =>
      new Promise<InputWaitReason>((resolve) => {
        state.calls += 1;
        pending.push(resolve);
      }),
    answer: (reason: InputWaitReason) => pending.shift()?.(reason),
  };
  return state;
}

describe('InputWaitWatcher', () => {
  test('reports once per quiet period, after a waiting probe', async () => {
    const probe = manualProbe();
    let reports = 0;
    using watcher = new InputWaitWatcher(1, { onWaiting: () => reports++, settleMs: 1, probe: probe.probe });
    await waitFor(() => probe.calls === 1, { what: 'the first probe' });
    probe.answer('busy');
    await waitFor(() => probe.calls === 2, { what: 'a probe after backing off' });
    probe.answer('waiting');
    await waitFor(() => reports === 1, { what: 'the report' });
    expect(watcher.waiting).toBe(true);
    watcher.activity();
    expect(watcher.waiting).toBe(false);
    await waitFor(() => probe.calls === 3, { what: 'a probe after the activity' });
    probe.answer('waiting');
    await waitFor(() => reports === 2, { what: 'the second report' });
  });

  test('a probe overtaken by activity is discarded', async () => {
    const probe = manualProbe();
    let reports = 0;
    using watcher = new InputWaitWatcher(1, { onWaiting: () => reports++, settleMs: 1, probe: probe.probe });
    await waitFor(() => probe.calls === 1, { what: 'the first probe' });
    watcher.activity(); // output arrived while the probe looked at /proc
    probe.answer('waiting');
    await waitFor(() => probe.calls === 2, { what: 'the probe of the new quiet period' });
    expect(reports).toBe(0);
    probe.answer('waiting');
    await waitFor(() => reports === 1, { what: 'the report' });
  });

  test('unknown stops probing; dispose stops everything', async () => {
    const probe = manualProbe();
    let reports = 0;
    const watcher = new InputWaitWatcher(1, { onWaiting: () => reports++, settleMs: 1, probe: probe.probe });
    await waitFor(() => probe.calls === 1, { what: 'the first probe' });
    probe.answer('unknown');
    watcher[Symbol.dispose]();
    watcher.activity();
    await new Promise((resolve) => setImmediate(resolve));
    expect(probe.calls).toBe(1);
    expect(reports).toBe(0);
  });
});
