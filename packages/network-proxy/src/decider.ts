import type { Logger, NetworkDecision } from '@execd/protocol';
import { RpcError } from '@execd/protocol';
import type { NetworkDenialReason, NetworkRequestInfo } from '@execd/protocol/contract';

/** An answer from a decider: a bare verdict, or the wire's `NetworkDecision` (`{type, reason?}`). */
export type NetworkDeciderAnswer = 'allow' | 'deny' | NetworkDecision;

/**
 * Asked about hosts that no allow or deny pattern matches (never about denied or local
 * destinations). The exec-server implements it by sending `network/policyRequest` to its client.
 * `cancelSignal` aborts when the answer is no longer wanted (the proxy closed).
 */
export type NetworkDecider = (
  request: NetworkRequestInfo,
  context: { readonly cancelSignal: AbortSignal },
) => Promise<NetworkDeciderAnswer>;

/**
 * How long a connection waits for the decider before it is denied (`deciderTimeout`). Long enough
 * for a person to answer a prompt, shorter than the request timeouts of common clients (npm, git).
 */
export const DEFAULT_DECIDER_TIMEOUT_MS = 30_000;

/** The longest timeout `setTimeout` can express; larger values would fire immediately. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * Validates a decision timeout. Zero is refused with the original's exact message
 * (`network policy decision callback timeout must be nonzero`), as `RpcError('invalidParams')`.
 */
export function validateDeciderTimeout(timeoutMs: number): number {
  if (timeoutMs === 0)
    throw new RpcError('invalidParams', 'network policy decision callback timeout must be nonzero');
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 0 || timeoutMs > MAX_TIMER_MS) {
    throw new RpcError(
      'invalidParams',
      `deciderTimeoutMs must be an integer from 1 to ${MAX_TIMER_MS}, got ${timeoutMs}`,
    );
  }
  return timeoutMs;
}

/** What the decider path concluded for one request. */
export type DeciderOutcome =
  | { readonly kind: 'allow' }
  | { readonly kind: 'deny'; readonly reason: NetworkDenialReason; readonly detail: string | undefined };

function toOutcome(answer: unknown): DeciderOutcome | undefined {
  if (answer === 'allow') return { kind: 'allow' };
  if (answer === 'deny') return { kind: 'deny', reason: 'deciderDenied', detail: undefined };
  if (typeof answer !== 'object' || answer === null) return undefined;
  const { type, reason } = answer as { type?: unknown; reason?: unknown };
  const detail = typeof reason === 'string' && reason !== '' ? reason : undefined;
  if (type === 'allow') return { kind: 'allow' };
  if (type === 'deny') return { kind: 'deny', reason: 'deciderDenied', detail };
  if (type === 'ask') return { kind: 'deny', reason: 'deciderAsk', detail };
  return undefined;
}

/**
 * Calls the decider at most once per `host:port` at a time and caches its answer for the life of
 * the proxy (one proxy per process, so per process). Each waiting connection has its own timeout;
 * a timeout or a throwing decider denies that connection only and is not cached, while an answer
 * that arrives after a timeout is still cached for the next attempt.
 */
export class DeciderCache {
  readonly #decider: NetworkDecider;
  readonly #timeoutMs: number;
  readonly #logger: Logger;
  readonly #answers = new Map<string, DeciderOutcome>();
  readonly #inflight = new Map<string, Promise<DeciderOutcome>>();
  readonly #closed = new AbortController();

  constructor(decider: NetworkDecider, timeoutMs: number, logger: Logger) {
    this.#decider = decider;
    this.#timeoutMs = validateDeciderTimeout(timeoutMs);
    this.#logger = logger;
  }

  /** The cached or fresh outcome for this request's host and port. */
  async decide(request: NetworkRequestInfo): Promise<DeciderOutcome> {
    if (this.#closed.signal.aborted) return { kind: 'deny', reason: 'proxyClosed', detail: undefined };
    const key = `${request.host}:${request.port}`;
    const cached = this.#answers.get(key);
    if (cached) return cached;
    let call = this.#inflight.get(key);
    if (!call) {
      call = this.#call(request, key);
      this.#inflight.set(key, call);
    }
    return await this.#withDeadline(call);
  }

  async #call(request: NetworkRequestInfo, key: string): Promise<DeciderOutcome> {
    try {
      const answer = await this.#decider(request, { cancelSignal: this.#closed.signal });
      const outcome = toOutcome(answer);
      if (outcome === undefined) {
        this.#logger.warn('network decider returned an unusable answer', { key, answer });
        return { kind: 'deny', reason: 'deciderFailed', detail: 'the decider returned an unusable answer' };
      }
      this.#answers.set(key, outcome);
      return outcome;
    } catch (error) {
      this.#logger.debug('network decider failed', { key, error });
      const detail = error instanceof Error ? error.message : String(error);
      return { kind: 'deny', reason: this.#closed.signal.aborted ? 'proxyClosed' : 'deciderFailed', detail };
    } finally {
      this.#inflight.delete(key);
    }
  }

  async #withDeadline(call: Promise<DeciderOutcome>): Promise<DeciderOutcome> {
    let timer: NodeJS.Timeout | undefined;
    let onClose: (() => void) | undefined;
    try {
      return await Promise.race([
        call,
        new Promise<DeciderOutcome>((resolve) => {
          timer = setTimeout(
            () =>
              resolve({
                kind: 'deny',
                reason: 'deciderTimeout',
                detail: `no answer within ${this.#timeoutMs} ms`,
              }),
            this.#timeoutMs,
          );
        }),
        new Promise<DeciderOutcome>((resolve) => {
          onClose = () => resolve({ kind: 'deny', reason: 'proxyClosed', detail: undefined });
          this.#closed.signal.addEventListener('abort', onClose, { once: true });
        }),
      ]);
    } finally {
      clearTimeout(timer);
      if (onClose) this.#closed.signal.removeEventListener('abort', onClose);
    }
  }

  /** Number of cached answers (for tests and diagnostics). */
  get cachedCount(): number {
    return this.#answers.size;
  }

  /** Denies every waiting connection with `proxyClosed` and aborts pending decider calls. Idempotent. */
  close(): void {
    this.#closed.abort();
  }
}
