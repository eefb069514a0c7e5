import { PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { type Logger, NOOP_LOGGER } from '@execd/protocol';
import { HeapReclaimer, type HeapReclaimerStats } from './heap-reclaimer.ts';

/** The V8 heap's shape for a long-running server that reads frames from untrusted peers. */
export interface HeapPolicyOptions {
  /**
   * The young generation stops growing once it is this large (default 8 MiB: two 4 MiB
   * semi-spaces). V8 lets it grow to 32 MiB under a high allocation rate and never gives the
   * pages back; output moves as Buffers, outside this heap, so a smaller one costs it little.
   */
  readonly youngGenerationBytes?: number;
  /** Full collections after bursts of large frames (see `HeapReclaimer`); on by default. */
  readonly reclaimAfterLargeFrames?: boolean;
  readonly logger?: Logger;
}

/** What {@link installHeapPolicy} returns. */
export interface HeapPolicy {
  /** The young generation's size when it was capped; undefined while it is below the cap. */
  cappedAtBytes(): number | undefined;
  reclaimer(): HeapReclaimerStats | undefined;
  /** Stops watching (the cap, once set, stays: V8 flags are per process). Idempotent. */
  close(): void;
}

export const YOUNG_GENERATION_BYTES: number = 8 * 1024 * 1024;

/** The installed policy's reclaimer (what transports report to), and the policy itself. */
let active: HeapReclaimer | undefined;
let installed: HeapPolicy | undefined;
/** Told after each collection after large frames, and when the policy goes. */
const reclaimedListeners = new Set<() => void>();
const notifyReclaimed = (): void => {
  for (const listener of reclaimedListeners) listener();
};

/**
 * Shapes this process's V8 heap for serving (the `execd-server` CLI installs it; an embedder that
 * runs a server inside its own process decides for itself: the settings are process-wide).
 * V8 reads its heap sizes only at start-up, but it reads the young generation's growth factor
 * each time it grows it: once the young generation reaches the cap, the factor is set to 1.
 * Installing twice replaces the first policy.
 */
export function installHeapPolicy(options: HeapPolicyOptions = {}): HeapPolicy {
  installed?.close();
  const logger = options.logger ?? NOOP_LOGGER;
  const cap = options.youngGenerationBytes ?? YOUNG_GENERATION_BYTES;
  let cappedAt: number | undefined;
  const observer = new PerformanceObserver(() => check());
  const check = (): void => {
    const size = youngGenerationSize();
    if (cappedAt !== undefined || size < cap) return;
    v8.setFlagsFromString('--semi-space-growth-factor=1');
    cappedAt = size;
    observer.disconnect();
    logger.debug('young generation capped', { bytes: size });
  };
  check();
  if (cappedAt === undefined) observer.observe({ entryTypes: ['gc'] });

  const collect = options.reclaimAfterLargeFrames === false ? undefined : fullCollector();
  const reclaimer =
    collect === undefined
      ? undefined
      : new HeapReclaimer({
          collect,
          onCollected: (pauseMs) => {
            logger.debug('heap collected after large frames', {
              pauseMs: Math.round(pauseMs * 10) / 10,
              heapUsedBytes: process.memoryUsage().heapUsed,
              youngGenerationBytes: youngGenerationSize(),
            });
            notifyReclaimed();
          },
        });
  active = reclaimer;
  const policy: HeapPolicy = {
    cappedAtBytes: () => cappedAt,
    reclaimer: () => reclaimer?.stats(),
    close: () => {
      observer.disconnect();
      reclaimer?.close();
      if (installed !== policy) return;
      installed = undefined;
      active = undefined;
      notifyReclaimed();
    },
  };
  installed = policy;
  return policy;
}

/** Transports report every inbound frame's size here; nothing happens without a policy. */
export function noteInboundFrame(bytes: number): void {
  active?.noteFrame(bytes);
}

/**
 * Whether large inbound frames should wait: a collection after large frames is due (their
 * garbage is still in the heap). Always false without a policy.
 */
export function heapCollectionDue(): boolean {
  return active?.due ?? false;
}

/** Calls `listener` after each collection after large frames (and when the policy goes). */
export function onHeapReclaimed(listener: () => void): () => void {
  reclaimedListeners.add(listener);
  return () => reclaimedListeners.delete(listener);
}

function youngGenerationSize(): number {
  for (const space of v8.getHeapSpaceStatistics())
    if (space.space_name === 'new_space') return space.space_size;
  return 0;
}

/**
 * A full, synchronous garbage collection: `globalThis.gc` under `--expose-gc`, otherwise the same
 * function taken from a context made while the flag is briefly on (the main context never gets
 * one). Undefined if V8 refuses.
 */
function fullCollector(): (() => void) | undefined {
  const exposed = (globalThis as { gc?: unknown }).gc;
  if (typeof exposed === 'function') return () => exposed();
  try {
    v8.setFlagsFromString('--expose-gc');
    const gc: unknown = runInNewContext('gc');
    return typeof gc === 'function' ? () => gc() : undefined;
  } catch {
    return undefined;
  } finally {
    v8.setFlagsFromString('--no-expose-gc');
  }
}
