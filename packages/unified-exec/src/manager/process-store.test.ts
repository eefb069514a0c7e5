import { describe, expect, test } from 'vitest';
import { MAX_UNIFIED_EXEC_PROCESSES } from '../constants.ts';
import { ProcessStore, type PruneCandidate, processIdToPrune } from './process-store.ts';

function candidates(
  rows: Array<[id: number, lastUsed: number, exited: boolean, locked?: boolean]>,
): PruneCandidate[] {
  return rows.map(([processId, lastUsed, exited, locked = false]) => ({
    processId,
    lastUsed,
    exited,
    locked,
  }));
}

describe('processIdToPrune (spec §4.5, process_manager_tests.rs)', () => {
  test('prefers exited processes outside the recently used set', () => {
    const meta = candidates([
      [1, 1, false],
      [2, 2, true],
      [3, 3, false],
      [4, 4, false],
      [5, 5, false],
      [6, 6, false],
      [7, 7, false],
      [8, 8, false],
      [9, 9, false],
      [10, 10, false],
    ]);
    expect(processIdToPrune(meta)).toBe(2);
  });

  test('falls back to the least recently used when none exited', () => {
    const meta = candidates(
      Array.from({ length: 10 }, (_, i) => [i + 1, i + 1, false] as [number, number, boolean]),
    );
    expect(processIdToPrune(meta)).toBe(1);
  });

  test('protects the 8 most recent even if exited', () => {
    const meta = candidates([
      [1, 1, false],
      [2, 2, false],
      [3, 3, true],
      [4, 4, false],
      [5, 5, false],
      [6, 6, false],
      [7, 7, false],
      [8, 8, false],
      [9, 9, false],
      [10, 10, true],
    ]);
    // 3..10 are the 8 most recent; 10 exited but protected: the LRU outside wins.
    expect(processIdToPrune(meta)).toBe(1);
  });

  test('does not evict a live process while the exited candidate is locked (finalising)', () => {
    const rows: Array<[number, number, boolean, boolean]> = [[1, 0, true, true]];
    for (let id = 2; id <= MAX_UNIFIED_EXEC_PROCESSES; id++) rows.push([id, 10, false, false]);
    expect(processIdToPrune(candidates(rows))).toBeUndefined();
  });

  test('skips a locked live process and takes the next least recently used', () => {
    const rows: Array<[number, number, boolean, boolean]> = [
      [1, 1, false, true],
      [2, 2, false, false],
    ];
    for (let id = 3; id <= 10; id++) rows.push([id, id, false, false]);
    expect(processIdToPrune(candidates(rows))).toBe(2);
  });

  test('nothing to prune in an empty store', () => {
    expect(processIdToPrune([])).toBeUndefined();
  });
});

describe('ProcessStore ids', () => {
  test('deterministic ids start at 1000 and continue after the largest reservation', () => {
    const store = new ProcessStore({ processIds: 'deterministic' });
    expect([store.allocate(), store.allocate(), store.allocate()]).toEqual([1000, 1001, 1002]);
    store.remove(1001);
    expect(store.allocate()).toBe(1003);
    store.remove(1000);
    store.remove(1002);
    store.remove(1003);
    expect(store.reservedCount).toBe(0);
    expect(store.allocate()).toBe(1000);
  });

  test('random ids are in [1000, 100000) and never collide with a reservation', () => {
    const values = [0, 0, 0.5, 0.999999];
    const store = new ProcessStore({ random: () => values.shift() ?? 0.25 });
    const first = store.allocate();
    const second = store.allocate(); // 0 again: collides, drawn again (0.5)
    expect(first).toBe(1000);
    expect(second).toBe(1000 + Math.floor(0.5 * 99_000));
    expect(store.allocate()).toBe(99_999);
    for (let i = 0; i < 200; i++) {
      const id = new ProcessStore().allocate();
      expect(id).toBeGreaterThanOrEqual(1000);
      expect(id).toBeLessThan(100_000);
    }
  });

  test('drain forgets every entry and every reservation', () => {
    const store = new ProcessStore({ processIds: 'deterministic' });
    store.allocate();
    store.allocate();
    expect(store.drain()).toEqual([]);
    expect(store.reservedCount).toBe(0);
  });
});
