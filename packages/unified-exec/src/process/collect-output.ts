import { POST_EXIT_CLOSE_WAIT_CAP_MS } from '../constants.ts';
import { HeadTailBuffer } from '../output/head-tail-buffer.ts';
import type { UnifiedExecProcess } from './unified-exec-process.ts';

/** Options of {@link collectOutputUntilDeadline}. */
export interface CollectOutputOptions {
  /** `performance.now()` value at which collection stops. */
  readonly deadline: number;
  /** After exit, wait at most this long for the output to close (default 50 ms). */
  readonly postExitCloseWaitMs?: number;
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
  for (;;) {
    const drained = process.drainInto(collected);
    if (!drained) {
      exitSeen ||= process.hasExited;
      if (exitSeen && process.outputClosed) break;
      const now = performance.now();
      const remaining = options.deadline - now;
      if (remaining <= 0) break;
      if (exitSeen) {
        postExitDeadline ??= now + Math.min(remaining, closeWaitCap);
        const closeWaitRemaining = postExitDeadline - now;
        if (closeWaitRemaining <= 0) break;
        await process.waitForChange(closeWaitRemaining);
        continue;
      }
      // Registered synchronously after the drain: nothing can slip in between.
      await process.waitForChange(remaining);
      continue;
    }
    exitSeen ||= process.hasExited;
    if (performance.now() >= options.deadline) break;
  }
  return collected;
}
