import { isProcessAlive, sessionPids } from '@execd/pty-utils';
import type { ProcessTable } from '../../src/types.ts';
import { waitFor } from './wait-for.ts';

/**
 * Records the OS pids (session leaders) of the processes a test started, so `afterEach` can
 * check that none of them, and none of their descendants, is still running.
 */
export class ProcessTracker {
  readonly #pids = new Set<number>();

  /** Remembers the pid of every running entry of `table`. */
  track(table: Pick<ProcessTable, 'list'>): void {
    for (const entry of table.list().processes) if (entry.pid !== undefined) this.#pids.add(entry.pid);
  }

  /** Remembers a pid directly. */
  add(pid: number): void {
    this.#pids.add(pid);
  }

  /** The tracked pids (and their session members) still running. */
  survivors(): number[] {
    const alive = new Set<number>();
    for (const pid of this.#pids) {
      if (isProcessAlive(pid)) alive.add(pid);
      for (const member of sessionPids(pid)) alive.add(member);
    }
    return [...alive];
  }

  /** Waits (bounded) until nothing tracked runs; throws listing the survivors otherwise. */
  async expectNoSurvivors(timeoutMs = 10_000): Promise<void> {
    try {
      await waitFor(() => this.survivors().length === 0, { timeoutMs, what: 'tracked processes to exit' });
    } catch (error) {
      throw new Error(`processes survived the test: ${this.survivors().join(', ')}`, { cause: error });
    }
    this.#pids.clear();
  }
}
