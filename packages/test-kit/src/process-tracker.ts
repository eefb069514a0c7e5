import { expectGone, expectTrackedGone, LEAK_PROCESS_TIMEOUT_MS, trackedSurvivors } from './leak-check.ts';

/** What {@link ProcessTracker.track} reads: a process table's `list()` (exec-server's shape). */
export interface ProcessList {
  list(): { readonly processes: readonly { readonly pid?: number | undefined }[] };
}

/**
 * Names the processes a test started (session leaders, whose leftovers may be re-parented away
 * from the worker) to the leak check: each must be gone, with every member of its session, when
 * the test ends. Every tracker feeds the one registry of {@link expectGone}.
 */
export class ProcessTracker {
  /** Tracks the pid of every entry of `table`. */
  track(table: ProcessList): void {
    for (const entry of table.list().processes) if (entry.pid !== undefined) expectGone(entry.pid);
  }

  /** Tracks one pid. */
  add(pid: number): void {
    expectGone(pid);
  }

  /** The tracked pids (and members of their sessions) still running. */
  survivors(): number[] {
    return trackedSurvivors();
  }

  /** Waits (bounded) until nothing tracked runs; throws naming the survivors otherwise. */
  expectNoSurvivors(timeoutMs: number = LEAK_PROCESS_TIMEOUT_MS): Promise<void> {
    return expectTrackedGone(timeoutMs);
  }
}
