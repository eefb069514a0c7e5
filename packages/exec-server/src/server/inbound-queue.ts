import type { CodecName, RpcMessage } from '@execd/protocol';

/**
 * Inbound messages a connection may have queued (read but not yet running) before the transport
 * stops reading from the socket: the original's per-connection `CHANNEL_CAPACITY`. Past it the
 * kernel's buffers, then TCP flow control, push back on the client.
 */
export const MAX_PENDING_INBOUND_MESSAGES = 128;
/**
 * Frame bytes queued (received, not dispatched yet) at which reading pauses too: 128 frames of up
 * to the 64 MiB frame limit would otherwise let one connection park gigabytes in the queue.
 */
export const MAX_PENDING_INBOUND_BYTES: number = 16 * 1024 * 1024;

/** One classified inbound frame, and the codec it came in. */
export type InboundEvent = (
  | { readonly kind: 'message'; readonly message: RpcMessage; readonly codec: CodecName }
  | { readonly kind: 'malformed'; readonly reason: string; readonly codec: CodecName }
) & { readonly frameBytes: number };

/** Options of {@link InboundQueue}. */
export interface InboundQueueOptions {
  /** Once aborted, nothing more is queued and `next` answers undefined. */
  readonly signal: AbortSignal;
  /** Stops/restarts reading inbound frames (the transport's backpressure). */
  readonly pauseReading: () => void;
  readonly resumeReading: () => void;
  /** Requests taken from the queue but still waiting for a lane: they count as pending too. */
  readonly waitingElsewhere: () => number;
}

/**
 * The inbound frames of one connection, queued in arrival order until the connection loop takes
 * them. Reading pauses once {@link MAX_PENDING_INBOUND_MESSAGES} are pending (or
 * {@link MAX_PENDING_INBOUND_BYTES} are queued) and resumes below half of both.
 */
export class InboundQueue {
  readonly #options: InboundQueueOptions;
  readonly #events: InboundEvent[] = [];
  #bytes = 0;
  #paused = false;
  #wake: (() => void) | undefined;

  constructor(options: InboundQueueOptions) {
    this.#options = options;
  }

  /** Queues `event` (dropped once the signal aborted). */
  push(event: InboundEvent): void {
    if (this.#options.signal.aborted) return;
    this.#events.push(event);
    this.#bytes += event.frameBytes;
    this.updateBackpressure();
    this.#wake?.();
  }

  /** The next event, once there is one; undefined once the signal aborted. */
  async next(): Promise<InboundEvent | undefined> {
    const signal = this.#options.signal;
    while (this.#events.length === 0 && !signal.aborted) {
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
      this.#wake = undefined;
    }
    if (signal.aborted) return undefined;
    const event = this.#events.shift();
    if (event) this.#bytes -= event.frameBytes;
    this.updateBackpressure();
    return event;
  }

  /** Drops every queued event. */
  clear(): void {
    this.#events.length = 0;
    this.#bytes = 0;
  }

  /** Wakes a `next` waiting for an event (to see the abort). */
  wake(): void {
    this.#wake?.();
  }

  /** Pauses or resumes reading as the pending count and queued bytes require. */
  updateBackpressure(): void {
    const pending = this.#events.length + this.#options.waitingElsewhere();
    const bytes = this.#bytes;
    if (!this.#paused && (pending >= MAX_PENDING_INBOUND_MESSAGES || bytes >= MAX_PENDING_INBOUND_BYTES)) {
      this.#paused = true;
      this.#options.pauseReading();
    } else if (
      this.#paused &&
      pending < MAX_PENDING_INBOUND_MESSAGES / 2 &&
      bytes < MAX_PENDING_INBOUND_BYTES / 2
    ) {
      this.#paused = false;
      this.#options.resumeReading();
    }
  }
}
