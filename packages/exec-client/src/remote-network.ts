import { ExecError } from '@execd/protocol';
import type { NetworkDenial, NetworkPolicyDecider } from '@execd/protocol/contract';
import { REMOTE_NETWORK_DENIALS_MAX } from './limits.ts';

/**
 * The managed-network side of one remote process as its client sees it: the decider given at its
 * start (if any), the denials the server reported (`network/policyDecision`), and a signal that
 * cancels pending decisions once the process closed.
 */
export class RemoteProcessNetwork {
  /** Decides this process's `network/policyRequest`s instead of the client's default decider. */
  decider: NetworkPolicyDecider | undefined;
  readonly #denials: NetworkDenial[] = [];
  /**
   * Made on first use: most processes never get a policy request, and every process ends (an
   * `AbortController` and an `ExecError` per process were ~8 % of a client's CPU per `/bin/true`).
   */
  #ended: AbortController | undefined;
  #endReason: string | undefined;

  /** Aborted once the process closed or can no longer be reached. */
  get endedSignal(): AbortSignal {
    if (this.#ended === undefined) {
      this.#ended = new AbortController();
      if (this.#endReason !== undefined) this.#ended.abort(endedError(this.#endReason));
    }
    return this.#ended.signal;
  }

  /** Keeps a reported denial (the newest {@link REMOTE_NETWORK_DENIALS_MAX}). */
  record(denial: NetworkDenial): void {
    this.#denials.push(denial);
    if (this.#denials.length > REMOTE_NETWORK_DENIALS_MAX) this.#denials.shift();
  }

  /** Denials reported so far, oldest first. */
  denials(): readonly NetworkDenial[] {
    return [...this.#denials];
  }

  /** Cancels pending decisions for this process (it closed). Idempotent. */
  end(reason: string): void {
    if (this.#endReason !== undefined) return;
    this.#endReason = reason;
    this.#ended?.abort(endedError(reason));
  }
}

function endedError(reason: string): ExecError {
  return new ExecError('aborted', reason);
}
