import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { PartialFrameBudget, type PartialFrameHold, type PartialFrameMeter } from './partial-frame-budget.ts';

const KiB = 1024;
const MiB = 1024 * KiB;

/** A connection as the budget sees it: whether it reads, and every pause/resume it was told. */
function connection(budget: PartialFrameBudget, name: string, log: string[]) {
  const state = { reading: true, meter: undefined as unknown as PartialFrameMeter };
  state.meter = budget.meter({
    pause: () => {
      expect(state.reading).toBe(true);
      state.reading = false;
      log.push(`${name} pause`);
    },
    resume: () => {
      expect(state.reading).toBe(false);
      state.reading = true;
      log.push(`${name} resume`);
    },
  });
  return state;
}

/** A hold the test switches, telling its subscribers as the heap policy does after a collection. */
function switchableHold() {
  const listeners = new Set<() => void>();
  let on = false;
  const hold: PartialFrameHold = {
    held: () => on,
    subscribe: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  const set = (value: boolean) => {
    on = value;
    for (const listener of listeners) listener();
  };
  return { hold, set, listeners };
}

/** A 512 KiB budget checking for stalls every 20 ms on a test clock; `a` has 512 KiB admitted. */
function stallSetup() {
  const clock = { at: 0 };
  const budget = new PartialFrameBudget({
    largeFrameBytes: 256 * KiB,
    budgetBytes: 512 * KiB,
    stallMs: 20,
    now: () => clock.at,
  });
  const log: string[] = [];
  const a = connection(budget, 'a', log);
  const b = connection(budget, 'b', log);
  a.meter.received(512 * KiB);
  return { budget, log, a, b, clock };
}

describe('PartialFrameBudget', () => {
  it('never counts or stops small frames, however many connections send them', () => {
    const budget = new PartialFrameBudget({ largeFrameBytes: 256 * KiB, budgetBytes: 1 * MiB });
    const log: string[] = [];
    const all = Array.from({ length: 50 }, (_, i) => connection(budget, `c${i}`, log));
    for (let round = 0; round < 10; round++)
      for (const c of all) {
        c.meter.received(200 * KiB);
        c.meter.completed();
      }
    expect(log).toEqual([]);
    expect(budget.stats()).toEqual({ admittedBytes: 0, peakBytes: 0, stalls: 0, waiting: 0, waits: 0 });
  });

  it('admits the first large frame whatever its size; later ones wait, first come first served', () => {
    const budget = new PartialFrameBudget({ largeFrameBytes: 256 * KiB, budgetBytes: 1 * MiB });
    const log: string[] = [];
    const [a, b, c] = ['a', 'b', 'c'].map((name) => connection(budget, name, log)) as [
      ReturnType<typeof connection>,
      ReturnType<typeof connection>,
      ReturnType<typeof connection>,
    ];
    a.meter.received(256 * KiB);
    for (let i = 0; i < 16; i++) a.meter.received(256 * KiB); // 4.25 MiB: far past the budget
    expect(a.reading).toBe(true);
    b.meter.received(300 * KiB); // large, no room
    c.meter.received(300 * KiB);
    expect([b.reading, c.reading]).toEqual([false, false]);
    expect(budget.stats()).toMatchObject({ admittedBytes: 17 * 256 * KiB, waiting: 2, waits: 2 });
    a.meter.completed(); // room: b first, then c (both fit: 600 KiB)
    expect(log).toEqual(['b pause', 'c pause', 'b resume', 'c resume']);
    expect(budget.stats()).toMatchObject({ admittedBytes: 600 * KiB, waiting: 0 });
    expect(budget.stats().peakBytes).toBe(17 * 256 * KiB);
  });

  it('stops admitted frames but the oldest once they exceed the budget together', () => {
    const budget = new PartialFrameBudget({ largeFrameBytes: 256 * KiB, budgetBytes: 1 * MiB });
    const log: string[] = [];
    const a = connection(budget, 'a', log);
    const b = connection(budget, 'b', log);
    a.meter.received(256 * KiB);
    b.meter.received(256 * KiB); // fits: admitted small
    a.meter.received(512 * KiB); // 1 MiB together
    expect([a.reading, b.reading]).toEqual([true, true]);
    b.meter.received(64 * KiB); // over the budget, and b is not the oldest: b stops
    expect(b.reading).toBe(false);
    a.meter.received(4 * MiB); // the oldest always goes on
    expect(a.reading).toBe(true);
    const c = connection(budget, 'c', log);
    c.meter.received(256 * KiB); // no room for a new one either
    expect(c.reading).toBe(false);
    a.meter.completed(); // b is the oldest now (320 KiB), c fits beside it
    expect(log).toEqual(['b pause', 'c pause', 'b resume', 'c resume']);
    expect(budget.stats()).toMatchObject({ admittedBytes: 576 * KiB, waiting: 0 });
    b.meter.completed();
    c.meter.completed();
    expect(budget.stats()).toMatchObject({ admittedBytes: 0, waiting: 0 });
  });

  it('a connection that closes gives its room, or its place in line, back', () => {
    const budget = new PartialFrameBudget({ largeFrameBytes: 256 * KiB, budgetBytes: 512 * KiB });
    const log: string[] = [];
    const a = connection(budget, 'a', log);
    const b = connection(budget, 'b', log);
    const c = connection(budget, 'c', log);
    a.meter.received(8 * MiB);
    b.meter.received(256 * KiB);
    c.meter.received(256 * KiB);
    b.meter.close(); // leaves the line: nothing to resume
    b.meter.close();
    b.meter.received(MiB); // a closed meter ignores what still arrives
    expect(budget.stats()).toMatchObject({ admittedBytes: 8 * MiB, waiting: 1 });
    a.meter.close();
    expect(log).toEqual(['b pause', 'c pause', 'c resume']);
    expect(budget.stats()).toMatchObject({ admittedBytes: 256 * KiB, waiting: 0 });
  });

  it('a waiting frame that completes anyway (small remainder) reads on', () => {
    const budget = new PartialFrameBudget({ largeFrameBytes: 256 * KiB, budgetBytes: 512 * KiB });
    const log: string[] = [];
    const a = connection(budget, 'a', log);
    const b = connection(budget, 'b', log);
    a.meter.received(MiB);
    b.meter.received(256 * KiB); // waits; the chunk that made it large also ended it
    b.meter.completed();
    expect(b.reading).toBe(true);
    expect(budget.stats()).toMatchObject({ admittedBytes: MiB, waiting: 0 });
  });

  it('while the hold holds, large frames stop at their next read and go on when it ends', () => {
    const { hold, set, listeners } = switchableHold();
    const budget = new PartialFrameBudget({ largeFrameBytes: 256 * KiB, budgetBytes: 16 * MiB, hold });
    const log: string[] = [];
    const a = connection(budget, 'a', log);
    const small = connection(budget, 'small', log);
    a.meter.received(256 * KiB);
    set(true);
    a.meter.received(64 * KiB); // even the only (oldest) frame stops
    const b = connection(budget, 'b', log);
    b.meter.received(256 * KiB); // a new large frame is not admitted
    small.meter.received(100 * KiB); // small frames never wait
    small.meter.completed();
    expect([a.reading, b.reading, small.reading]).toEqual([false, false, true]);
    expect(budget.stats().waiting).toBe(2);
    set(false);
    expect(log).toEqual(['a pause', 'b pause', 'a resume', 'b resume']);
    budget.close();
    expect(listeners.size).toBe(0);
  });

  it('a frame that stops growing while others wait gives its room up, and asks anew later', async () => {
    const { budget, log, a, b, clock } = stallSetup();
    b.meter.received(256 * KiB); // waits: the check runs 20 ms from now
    clock.at = 10;
    a.meter.received(64 * KiB); // a still grows (a read's worth)
    await sleep(40);
    expect(log).toEqual(['b pause']); // 30 (real) ms later, but a grew 0 (clock) ms ago
    clock.at = 40; // a has not grown for 30 ms
    await sleep(40);
    expect(log).toEqual(['b pause', 'b resume']);
    expect(budget.stats()).toMatchObject({ admittedBytes: 256 * KiB, stalls: 1, waiting: 0 });
    a.meter.received(KiB); // a goes on: it must wait for room now
    expect(log).toEqual(['b pause', 'b resume', 'a pause']);
    b.meter.completed();
    expect(log).toEqual(['b pause', 'b resume', 'a pause', 'a resume']);
    expect(budget.stats()).toMatchObject({ admittedBytes: 577 * KiB, waiting: 0 });
    budget.close();
  });

  it('a frame that trickles counts as stalled', async () => {
    const { budget, log, a, b, clock } = stallSetup();
    b.meter.received(256 * KiB);
    for (let i = 0; i < 8 && log.length < 2; i++) {
      clock.at += 10;
      a.meter.received(100); // a few bytes (a pong, a byte of payload) every while
      await sleep(15);
    }
    expect(log).toEqual(['b pause', 'b resume']);
    expect(budget.stats().stalls).toBe(1);
    budget.close();
  });

  it('a frame stopped by the budget or the hold is never taken for stalled', async () => {
    let clock = 0;
    const { hold, set } = switchableHold();
    const budget = new PartialFrameBudget({
      largeFrameBytes: 256 * KiB,
      budgetBytes: 16 * MiB,
      stallMs: 20,
      hold,
      now: () => clock,
    });
    const log: string[] = [];
    const a = connection(budget, 'a', log);
    a.meter.received(256 * KiB);
    set(true);
    a.meter.received(KiB); // held
    clock = 1000;
    await sleep(50);
    expect(budget.stats()).toMatchObject({ stalls: 0, admittedBytes: 257 * KiB });
    set(false);
    expect(log).toEqual(['a pause', 'a resume']);
    budget.close();
  });

  it('close() lets every waiting connection read and stops bounding (idempotent)', () => {
    const { hold, set } = switchableHold();
    const budget = new PartialFrameBudget({ largeFrameBytes: 256 * KiB, budgetBytes: 512 * KiB, hold });
    const log: string[] = [];
    const a = connection(budget, 'a', log);
    const b = connection(budget, 'b', log);
    a.meter.received(MiB);
    b.meter.received(256 * KiB);
    set(true);
    a.meter.received(64 * KiB);
    budget.close();
    budget.close();
    expect([a.reading, b.reading]).toEqual([true, true]);
    const c = connection(budget, 'c', log);
    c.meter.received(64 * MiB);
    a.meter.received(MiB);
    expect([a.reading, c.reading]).toEqual([true, true]);
    expect(log).toEqual(['b pause', 'a pause', 'a resume', 'b resume']);
  });
});
