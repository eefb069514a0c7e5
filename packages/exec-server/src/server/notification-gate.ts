import type { Logger } from '@execd/protocol';

/**
 * Bytes of outbound data a connection may have queued (not yet taken by the kernel) before its
 * process notifications are dropped: a safety net only. Long before it, at
 * {@link OUTPUT_PAUSE_QUEUED_BYTES}, the session's processes stop being read, so the backlog grows
 * past the pause mark by at most one output chunk per process (8 KiB, about 11 KiB as JSON) plus
 * the responses the client asked for: over a thousand processes streaming at once, or a client
 * piling up megabytes of unread `process/read` answers, before a byte is dropped. Should that
 * happen, the client sees a seq gap and fills it with `process/read`.
 */
export const MAX_QUEUED_NOTIFICATION_BYTES: number = 16 * 1024 * 1024;

/**
 * Backlog above which the attached session's processes stop being read (their children block in
 * `write` once their pipes fill: the original's back-pressure, spec §2.1): a quarter of the cap,
 * which keeps a fast socket busy (tens of milliseconds of data) and leaves the rest as headroom.
 */
export const OUTPUT_PAUSE_QUEUED_BYTES: number = MAX_QUEUED_NOTIFICATION_BYTES / 4;

/**
 * Backlog at or below which the processes are read again: a quarter of the pause mark, so the
 * socket still has data to send while the children's pipes refill, and pause/resume cycles stay
 * coarse (a few per 4 MiB streamed).
 */
export const OUTPUT_RESUME_QUEUED_BYTES: number = OUTPUT_PAUSE_QUEUED_BYTES / 4;

/** Options of {@link NotificationGate}; the marks default to a quarter, and a sixteenth, of the cap. */
export interface NotificationGateOptions {
  /** Hard cap on the backlog for notifications (default {@link MAX_QUEUED_NOTIFICATION_BYTES}). */
  readonly maxQueuedBytes?: number | undefined;
  readonly pauseAboveBytes?: number | undefined;
  readonly resumeAtBytes?: number | undefined;
  /** Told `true` when the backlog crossed the pause mark, `false` when it drained to the resume mark. */
  readonly onPressure?: ((congested: boolean) => void) | undefined;
}

/** Counters of one gate, for logs and tests. */
export interface NotificationGateStats {
  readonly sent: number;
  /** Notifications dropped at the hard cap (0 for a client that reads at all). */
  readonly dropped: number;
  /** Times the backlog crossed the pause mark (the session's output was held back). */
  readonly pauses: number;
}

/** What the gate decided for one notification, and whether that changed its dropping state. */
export type GateDecision =
  | { readonly send: true; readonly resumedAfterDropping?: number }
  | { readonly send: false; readonly startedDropping: boolean };

/**
 * Flow control of one connection's outbound queue. Every frame is reported (`admit` for a
 * notification, `observe` for a response); above the pause mark the gate is congested and tells
 * `onPressure(true)` (the server pauses the session's process output), and the transport then
 * reports each flushed frame (`flushed`) until the backlog is down to the resume mark
 * (`onPressure(false)`). Only past the hard cap are notifications dropped, until the backlog is
 * back under the pause mark. Responses are never dropped.
 *
 * ```
 *  flowing ──backlog > pause──> congested ──backlog > cap──> dropping
 *     ^                            │  ^                         │
 *     └───backlog <= resume────────┘  └─────backlog <= pause────┘
 * ```
 */
export class NotificationGate {
  readonly #max: number;
  readonly #pause: number;
  readonly #resume: number;
  readonly #onPressure: (congested: boolean) => void;
  #congested = false;
  #dropping = false;
  #sent = 0;
  #dropped = 0;
  #droppedThisBurst = 0;
  #pauses = 0;

  constructor(options: NotificationGateOptions = {}) {
    const max = options.maxQueuedBytes ?? MAX_QUEUED_NOTIFICATION_BYTES;
    const pause = options.pauseAboveBytes ?? max / 4;
    const resume = options.resumeAtBytes ?? pause / 4;
    if (!(max > 0) || !(pause > 0) || pause > max || !(resume >= 0) || resume > pause) {
      throw new RangeError(`invalid notification watermarks ${resume} <= ${pause} <= ${max}`);
    }
    this.#max = max;
    this.#pause = pause;
    this.#resume = resume;
    this.#onPressure = options.onPressure ?? (() => {});
  }

  /** True between crossing the pause mark and draining to the resume mark: report every flush. */
  get congested(): boolean {
    return this.#congested;
  }

  get stats(): NotificationGateStats {
    return { sent: this.#sent, dropped: this.#dropped, pauses: this.#pauses };
  }

  /** Decides for a notification of `frameBytes` given `queuedBytes` already waiting to be written. */
  admit(queuedBytes: number, frameBytes: number): GateDecision {
    let resumedAfterDropping: number | undefined;
    if (this.#dropping && queuedBytes <= this.#pause) {
      this.#dropping = false;
      resumedAfterDropping = this.#droppedThisBurst;
      this.#droppedThisBurst = 0;
    }
    // An empty queue always takes one frame, so a single large notification is never starved.
    if (!this.#dropping && (queuedBytes === 0 || queuedBytes + frameBytes <= this.#max)) {
      this.#sent++;
      this.observe(queuedBytes, frameBytes);
      return resumedAfterDropping === undefined ? { send: true } : { send: true, resumedAfterDropping };
    }
    const startedDropping = !this.#dropping;
    this.#dropping = true;
    this.#dropped++;
    this.#droppedThisBurst++;
    return { send: false, startedDropping };
  }

  /** A frame of `frameBytes` (a response, or an admitted notification) is being queued. */
  observe(queuedBytes: number, frameBytes: number): void {
    if (this.#congested || queuedBytes + frameBytes <= this.#pause) return;
    this.#congested = true;
    this.#pauses++;
    this.#onPressure(true);
  }

  /** A frame queued while congested left the queue; `queuedBytes` are still waiting. */
  flushed(queuedBytes: number): void {
    if (!this.#congested || queuedBytes > this.#resume) return;
    this.#congested = false;
    this.#onPressure(false);
  }
}

/**
 * `gate.admit(backlog, bytes)`, logging when the connection starts dropping notifications and
 * when they flow again. True: send the notification.
 */
export function admitNotification(
  gate: NotificationGate,
  backlog: number,
  bytes: number,
  context: { readonly logger: Logger; readonly connection: string },
): boolean {
  const decision = gate.admit(backlog, bytes);
  if (!decision.send) {
    if (decision.startedDropping) {
      context.logger.warn(
        'client backlog over the hard cap; dropping process notifications (output stays readable with process/read)',
        { connection: context.connection, bufferedBytes: backlog },
      );
    }
    return false;
  }
  if (decision.resumedAfterDropping !== undefined) {
    context.logger.info('client backlog under the pause mark; notifications flow again', {
      connection: context.connection,
      dropped: decision.resumedAfterDropping,
    });
  }
  return true;
}
