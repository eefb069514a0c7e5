import {
  decodeParams,
  type Logger,
  type NetworkPolicyRequestParams,
  RpcError,
  untilAborted,
} from '@execd/protocol';
import type { NetworkPolicyAnswer, NetworkPolicyDecider } from '@execd/protocol/contract';
import { denialFromDecision, type NetworkPolicyDecisionListener } from './network-policy.ts';
import type { RemoteProcessNetwork } from './remote-network.ts';

/** What the router needs from its client. */
export interface NetworkPolicyRouterOptions {
  /** The network state of a process this client started and still routes. */
  readonly lookup: (processId: string) => RemoteProcessNetwork | undefined;
  /** Decides for processes started without their own decider. */
  readonly decider: NetworkPolicyDecider | undefined;
  readonly onDecision: NetworkPolicyDecisionListener | undefined;
  readonly logger: Logger;
}

/**
 * The client's side of the managed network: routes each `network/policyRequest` to the decider
 * of its process (the one given at start, else the client's), and each `network/policyDecision`
 * to its process's denial list and to the client's listener.
 */
export class NetworkPolicyRouter {
  readonly #options: NetworkPolicyRouterOptions;

  constructor(options: NetworkPolicyRouterOptions) {
    this.#options = options;
  }

  /**
   * Answers one question. Rejects with -32601 when nobody decides for the process (the server
   * then denies without remembering), and with an `aborted` ExecError once the process closed or
   * the connection is gone (`cancelSignal`), even if the decider ignores its signal.
   */
  decide(
    request: NetworkPolicyRequestParams,
    context: { readonly cancelSignal: AbortSignal },
  ): Promise<NetworkPolicyAnswer> {
    const network = this.#options.lookup(request.processId);
    const decider = network?.decider ?? this.#options.decider;
    if (decider === undefined) {
      return Promise.reject(
        new RpcError(
          'methodNotFound',
          `exec-server client has no network policy decider for process ${request.processId}`,
        ),
      );
    }
    const cancelSignal =
      network === undefined
        ? context.cancelSignal
        : AbortSignal.any([context.cancelSignal, network.endedSignal]);
    const answer = Promise.resolve().then(() => decider(request, { cancelSignal }));
    return untilAborted(answer, cancelSignal, 'network policy decision');
  }

  /** A `network/policyDecision` notification (params not yet validated). */
  accept(rawParams: unknown): void {
    let decision: ReturnType<typeof decodeParams<'network/policyDecision'>>;
    try {
      decision = decodeParams('network/policyDecision', rawParams);
    } catch (error) {
      this.#options.logger.warn('invalid network/policyDecision from the exec-server', { error });
      return;
    }
    const denial = denialFromDecision(decision);
    if (denial !== undefined) this.#options.lookup(decision.processId)?.record(denial);
    try {
      this.#options.onDecision?.(decision);
    } catch (error) {
      this.#options.logger.warn('onNetworkPolicyDecision listener threw', { error });
    }
  }
}
