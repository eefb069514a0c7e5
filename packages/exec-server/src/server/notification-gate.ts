/**
 * Bytes of outbound data a connection may have queued (not yet taken by the kernel) before its
 * process notifications are paused: enough for many processes' worth of full-speed output in
 * flight, small enough that a stalled client costs bounded memory. Output stays retained in the
 * process table (1 MiB per process) and is readable with `process/read` either way.
 */
export const MAX_QUEUED_NOTIFICATION_BYTES: number = 16 * 1024 * 1024;

/** Counters of one gate, for logs and tests. */
export interface NotificationGateStats {
  readonly sent: number;
  readonly dropped: number;
  /** Times the gate closed because the client was too slow. */
  readonly pauses: number;
}

/** What the gate decided for one notification, and whether that changed its state. */
export type GateDecision =
  | { readonly send: true; readonly resumedAfterDropping?: number }
  | { readonly send: false; readonly startedDropping: boolean };

/**
 * Decides, per notification, whether a connection is keeping up. When queued bytes would exceed
 * `highWaterBytes` the gate closes and notifications are dropped (never the child, never its
 * retained output); it reopens once the queue drained below `lowWaterBytes`. Clients see a seq
 * gap in pushed events and fill it with `process/read`. Responses never pass through the gate.
 */
export class NotificationGate {
  readonly #high: number;
  readonly #low: number;
  #open = true;
  #sent = 0;
  #dropped = 0;
  #droppedThisPause = 0;
  #pauses = 0;

  constructor(
    highWaterBytes: number = MAX_QUEUED_NOTIFICATION_BYTES,
    lowWaterBytes: number = highWaterBytes / 2,
  ) {
    if (!(highWaterBytes > 0) || !(lowWaterBytes >= 0) || lowWaterBytes > highWaterBytes) {
      throw new RangeError(`invalid notification watermarks ${lowWaterBytes}..${highWaterBytes}`);
    }
    this.#high = highWaterBytes;
    this.#low = lowWaterBytes;
  }

  /** True while notifications are being delivered. */
  get open(): boolean {
    return this.#open;
  }

  get stats(): NotificationGateStats {
    return { sent: this.#sent, dropped: this.#dropped, pauses: this.#pauses };
  }

  /** Decides for a notification of `frameBytes` given `queuedBytes` already waiting to be written. */
  admit(queuedBytes: number, frameBytes: number): GateDecision {
    let resumedAfterDropping: number | undefined;
    if (!this.#open && queuedBytes <= this.#low) {
      this.#open = true;
      resumedAfterDropping = this.#droppedThisPause;
      this.#droppedThisPause = 0;
    }
    // An empty queue always takes one frame, so a single large notification is never starved.
    if (this.#open && (queuedBytes === 0 || queuedBytes + frameBytes <= this.#high)) {
      this.#sent++;
      return resumedAfterDropping === undefined ? { send: true } : { send: true, resumedAfterDropping };
    }
    const startedDropping = this.#open;
    if (startedDropping) this.#pauses++;
    this.#open = false;
    this.#dropped++;
    this.#droppedThisPause++;
    return { send: false, startedDropping };
  }
}
