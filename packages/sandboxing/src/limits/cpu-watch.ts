import { setTimeout as sleep } from 'node:timers/promises';

/**
 * How often a CPU-time limit is checked. cgroups have no hard CPU-seconds budget (`cpu.max` and
 * `cpu.cfs_quota_us` throttle a rate, they never stop a command), so the budget is enforced by
 * reading the group's usage and killing it once over. The command can overshoot by up to one
 * interval times the CPUs it keeps busy (plus the kill's latency): 250 ms x 2 cores here. Four
 * reads a second of one small file per command with a CPU limit is negligible.
 */
export const CPU_POLL_INTERVAL_MS = 250;

/** Options of {@link watchCpuTime}. */
export interface CpuWatchOptions {
  /** The group's CPU time in seconds so far (`undefined`: the group is gone). */
  readonly read: () => Promise<number | undefined>;
  readonly limitSeconds: number;
  /** Called once, when usage passes the limit. */
  readonly onExceeded: () => Promise<void>;
  readonly intervalMs?: number | undefined;
  /** Called if reading fails (the watch then stops: the limit is no longer enforced). */
  readonly onError?: ((error: unknown) => void) | undefined;
}

/** A running CPU-time watch; `stop()` is idempotent. */
export interface CpuWatch {
  /** True once the limit was passed (and `onExceeded` called). */
  readonly exceeded: boolean;
  stop(): void;
}

/** Polls a group's CPU time and calls `onExceeded` once it passes the limit. Never keeps Node alive. */
export function watchCpuTime(options: CpuWatchOptions): CpuWatch {
  const controller = new AbortController();
  const state = { exceeded: false };
  const intervalMs = options.intervalMs ?? CPU_POLL_INTERVAL_MS;
  const loop = async (): Promise<void> => {
    while (!controller.signal.aborted) {
      await sleep(intervalMs, undefined, { signal: controller.signal, ref: false });
      const seconds = await options.read();
      if (seconds === undefined) return;
      if (seconds >= options.limitSeconds) {
        state.exceeded = true;
        await options.onExceeded();
        return;
      }
    }
  };
  // An abort (stop) or a vanished group ends the loop; neither is an error.
  loop().catch((error: unknown) => {
    if (!controller.signal.aborted) options.onError?.(error);
  });
  return {
    get exceeded() {
      return state.exceeded;
    },
    stop: () => controller.abort(),
  };
}
