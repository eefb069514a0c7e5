import {
  decodeParams,
  errorMessage,
  type Logger,
  type NetworkPolicyRequestParams,
  type RequestId,
  RpcError,
  type RpcMessage,
  responseMessage,
  TransportClosedError,
} from '@execd/protocol';
import type { NetworkPolicyAnswer } from '@execd/protocol/contract';
import { toWireDecision } from './network-policy.ts';

/** Answers `network/policyRequest` (see {@link InboundRequests}). */
export type NetworkPolicyRequestHandler = (
  request: NetworkPolicyRequestParams,
  context: { readonly cancelSignal: AbortSignal },
) => Promise<NetworkPolicyAnswer>;

/** Options of {@link InboundRequests}. */
export interface InboundRequestsOptions {
  /** Sends the reply on the connection the request came on. */
  readonly send: (message: RpcMessage) => void;
  /** Absent: `network/policyRequest` is answered -32601 like any other method. */
  readonly onNetworkPolicyRequest?: NetworkPolicyRequestHandler | undefined;
  readonly logger: Logger;
}

/**
 * The requests a server sends to the client on one connection. `network/policyRequest` goes to
 * the handler and is answered `{decision}` (a `reason` always set on `deny` and `ask`), -32602 for
 * params that do not validate, the handler's RpcError, or -32603 for anything else it throws;
 * every other method is -32601. Handlers still running when the connection closes are cancelled
 * and never answered (the server has already denied those connections).
 */
export class InboundRequests {
  readonly #options: InboundRequestsOptions;
  readonly #running = new Set<AbortController>();
  #closed = false;

  constructor(options: InboundRequestsOptions) {
    this.#options = options;
  }

  /** One request from the server. */
  handle(id: RequestId, method: string, params: unknown): void {
    const handler = this.#options.onNetworkPolicyRequest;
    if (method !== 'network/policyRequest' || handler === undefined) {
      this.#reply(
        errorMessage(
          id,
          new RpcError('methodNotFound', `exec-server client does not implement \`${method}\``),
        ),
      );
      return;
    }
    void this.#answer(id, params, handler);
  }

  /** The connection closed: cancels running handlers; their answers are dropped. Idempotent. */
  close(reason: string): void {
    this.#closed = true;
    const running = [...this.#running];
    this.#running.clear();
    for (const cancel of running) cancel.abort(new TransportClosedError(undefined, reason));
  }

  async #answer(id: RequestId, raw: unknown, handler: NetworkPolicyRequestHandler): Promise<void> {
    const cancel = new AbortController();
    this.#running.add(cancel);
    let reply: RpcMessage;
    try {
      const request = decodeParams('network/policyRequest', raw);
      const decision = toWireDecision(await handler(request, { cancelSignal: cancel.signal }));
      reply = responseMessage(id, { decision });
    } catch (error) {
      this.#options.logger.debug('network/policyRequest failed', { id, error });
      reply = errorMessage(id, RpcError.is(error) ? error : new RpcError('internal', describe(error)));
    } finally {
      this.#running.delete(cancel);
    }
    this.#reply(reply);
  }

  #reply(message: RpcMessage): void {
    if (!this.#closed) this.#options.send(message);
  }
}

function describe(error: unknown): string {
  return `network policy decider failed: ${error instanceof Error ? error.message : String(error)}`;
}
