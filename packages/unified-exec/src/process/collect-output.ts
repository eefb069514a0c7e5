import { POST_EXIT_CLOSE_WAIT_CAP_MS } from '../constants.ts';
import { HeadTailBuffer } from '../output/head-tail-buffer.ts';
import type { UnifiedExecProcess } from './unified-exec-process.ts';

/** Options of {@link collectOutputUntilDeadline}. */
export interface CollectOutputOptions {
  /** `performance.now()` value at which collection stops. */
  readonly deadline: number;
  /** After exit, wait at most this long for the output to close (default 50 ms). */
  readonly postExitCloseWaitMs?: number;
  /**
   * Stops once the terminal waits for input, reported after this many reports had arrived (the
   * count before the call's write or start), and nothing is left to drain. Absent: never.
   */
  readonly stopOnInputWaitAfter?: number | undefined;
  /** Stops collecting as soon as it aborts (what arrived so far is returned). */
  readonly cancelSignal?: AbortSignal | undefined;
}

/**
 * Drains a process's output until the deadline (the original's `collect_output_until_deadline`,
 * spec §4.3 step 5): stops early once the process exited and its output closed; after an exit
 * whose output is still open, waits at most `min(remaining, 50 ms)` in total for the rest. The
 * result is itself a head/tail buffer, so repeated drains stay bounded and keep omitted counts.
 */
export async function collectOutputUntilDeadline(
  process: UnifiedExecProcess,
  options: CollectOutputOptions,
): Promise<HeadTailBuffer> {
  const collected = new HeadTailBuffer();
  const closeWaitCap = options.postExitCloseWaitMs ?? POST_EXIT_CLOSE_WAIT_CAP_MS;
  let exitSeen = process.hasExited;
  let postExitDeadline: number | undefined;
  const signal = options.cancelSignal;
  // A cancelled wait ends the loop at its next turn (it checks `signal.aborted`).
  const wait = (ms: number): Promise<unknown> => process.waitForChange(ms, signal).catch(() => false);
  for (;;) {
    const drained = process.drainInto(collected);
    if (signal?.aborted) break;
    if (!drained) {
      exitSeen ||= process.hasExited;
      if (exitSeen && process.outputClosed) break;
      if (waitsForInput(process, options.stopOnInputWaitAfter)) break;
      const now = performance.now();
      const remaining = options.deadline - now;
      if (remaining <= 0) break;
      if (exitSeen) {
        postExitDeadline ??= now + Math.min(remaining, closeWaitCap);
        const closeWaitRemaining = postExitDeadline - now;
        if (closeWaitRemaining <= 0) break;
        await wait(closeWaitRemaining);
        continue;
      }
      // Registered synchronously after the drain: nothing can slip in between.
      await wait(remaining);
      continue;
    }
    exitSeen ||= process.hasExited;
    if (performance.now() >= options.deadline) break;
  }
  return collected;
}

/** True when the terminal waits for input, as reported after `afterReports` reports. */
function waitsForInput(process: UnifiedExecProcess, afterReports: number | undefined): boolean {
  return afterReports !== undefined && process.waitingForInput && process.inputWaitReports > afterReports;
}
