import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { HeapReclaimer } from './heap-reclaimer.ts';

const KiB = 1024;

function reclaimer(options: { minIntervalMs?: number } = {}) {
  const runs: number[] = [];
  const r = new HeapReclaimer({
    collect: () => runs.push(performance.now()),
    largeFrameBytes: 64 * KiB,
    collectAfterBytes: 1024 * KiB,
    minIntervalMs: options.minIntervalMs ?? 0,
  });
  return { r, runs };
}

describe('HeapReclaimer', () => {
  it('ignores frames below the large-frame size, however many', async () => {
    const { r, runs } = reclaimer();
    for (let i = 0; i < 10_000; i++) r.noteFrame(64 * KiB - 1);
    await nextTurn();
    expect(runs).toEqual([]);
    expect(r.stats().pendingBytes).toBe(0);
    r.close();
  });

  it('collects once per threshold of large frames, on a later turn, never inside noteFrame', async () => {
    const { r, runs } = reclaimer();
    for (let i = 0; i < 15; i++) r.noteFrame(64 * KiB);
    expect(r.stats().pendingBytes).toBe(15 * 64 * KiB);
    await nextTurn();
    expect(runs).toEqual([]);
    r.noteFrame(64 * KiB); // the 16th: 1 MiB
    r.noteFrame(256 * KiB); // more frames in the same turn do not add a collection
    expect(runs).toEqual([]);
    await nextTurn();
    expect(runs).toHaveLength(1);
    expect(r.stats()).toMatchObject({ collections: 1, pendingBytes: 0 });
    r.close();
  });

  it('spaces collections by minIntervalMs under steady bulk input', async () => {
    const { r, runs } = reclaimer({ minIntervalMs: 200 });
    r.noteFrame(2048 * KiB);
    await nextTurn();
    expect(runs).toHaveLength(1);
    r.noteFrame(2048 * KiB); // due at once, but the last collection was just now
    await sleep(50);
    expect(runs).toHaveLength(1);
    await sleep(250);
    expect(runs).toHaveLength(2);
    expect(runs[1]! - runs[0]!).toBeGreaterThanOrEqual(190);
    r.close();
  });

  it('waits pause / maxPauseShare after a slow collection, and reports due meanwhile', async () => {
    let clock = 0;
    const runs: number[] = [];
    const r = new HeapReclaimer({
      collect: () => {
        runs.push(performance.now());
        clock += 10; // each collection "takes" 10 ms
      },
      largeFrameBytes: 64 * KiB,
      collectAfterBytes: 1024 * KiB,
      minIntervalMs: 0,
      maxPauseShare: 0.1,
      now: () => clock,
    });
    expect(r.due).toBe(false);
    r.noteFrame(2048 * KiB);
    expect(r.due).toBe(true);
    await nextTurn();
    expect(runs).toHaveLength(1);
    expect(r.due).toBe(false);
    r.noteFrame(2048 * KiB); // due again: the next collection waits 10 / 0.1 = 100 ms
    expect(r.due).toBe(true);
    await sleep(40);
    expect(runs).toHaveLength(1);
    await sleep(120);
    expect(runs).toHaveLength(2);
    expect(runs[1]! - runs[0]!).toBeGreaterThanOrEqual(90);
    expect(r.stats()).toMatchObject({ collections: 2, pauseMs: 20 });
    r.close();
    expect(r.due).toBe(false);
  });

  it('close() cancels a scheduled collection and ignores later frames (idempotent)', async () => {
    const { r, runs } = reclaimer();
    r.noteFrame(4096 * KiB);
    r.close();
    r.close();
    r.noteFrame(4096 * KiB);
    await sleep(20);
    expect(runs).toEqual([]);
  });
});
