import { ExecError, TransportClosedError } from '@execd/protocol';
import type { FrameChannel } from './frame-channel.ts';

/** The original's text for a replacement offered while another one is still being resumed. */
export const REPLACEMENT_IN_PROGRESS_MESSAGE = 'an accepted exec-server replacement is already in progress';

/** The original's text for an accepted client asked to resume a session on its first connection. */
export const INITIAL_RESUME_MESSAGE = 'accepted exec-server initial connection cannot resume a session';

/**
 * Where an accepted client's connections come from: channels handed in by the host (sockets the
 * executor dialled) instead of dialled by the client. One channel at a time: from `offer` until
 * the client's attempt on it ended (`attemptDone`), another offer is refused, so two
 * replacements never race to resume the same session (the original's single replacement slot).
 */
export class AcceptedChannelSource {
  #queued: FrameChannel | undefined;
  #busy = false;
  #waiter: ((channel: FrameChannel) => void) | undefined;
  #closed = false;

  /** Hands in a channel. Throws a `protocol` ExecError while another one is being tried. */
  offer(channel: FrameChannel): void {
    if (this.#closed) throw new TransportClosedError(undefined, 'accepted exec-server client is closed');
    if (this.#busy) throw new ExecError('protocol', REPLACEMENT_IN_PROGRESS_MESSAGE);
    this.#busy = true;
    const waiter = this.#waiter;
    this.#waiter = undefined;
    if (waiter) waiter(channel);
    else this.#queued = channel;
  }

  /**
   * The next channel handed in: at once when one is queued, else when one arrives. Rejects with
   * `connectTimeout` after `timeoutMs` (the recovery loop then waits again), or `aborted`.
   */
  next(timeoutMs: number, cancelSignal?: AbortSignal): Promise<FrameChannel> {
    const queued = this.#queued;
    if (queued !== undefined) {
      this.#queued = undefined;
      return Promise.resolve(queued);
    }
    return new Promise((resolve, reject) => {
      const cleanup = (): void => {
        clearTimeout(timer);
        cancelSignal?.removeEventListener('abort', onAbort);
        if (this.#waiter === deliver) this.#waiter = undefined;
      };
      const deliver = (channel: FrameChannel): void => {
        cleanup();
        resolve(channel);
      };
      const onAbort = (): void => {
        cleanup();
        reject(new ExecError('aborted', 'waiting for the executor to connect again was cancelled'));
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new ExecError('connectTimeout', `the executor did not connect again within ${timeoutMs} ms`));
      }, timeoutMs);
      if (cancelSignal?.aborted) {
        onAbort();
        return;
      }
      cancelSignal?.addEventListener('abort', onAbort, { once: true });
      this.#waiter = deliver;
    });
  }

  /** The client finished its attempt on the last channel (resumed or not): the slot is free. */
  attemptDone(): void {
    this.#busy = false;
  }

  /** Refuses further offers and closes a channel nobody took. */
  close(): void {
    this.#closed = true;
    this.#queued?.terminate();
    this.#queued = undefined;
  }
}
