import {
  type NetworkDecider,
  type NetworkDeciderAnswer,
  type NetworkDecisionRecord,
  type NetworkProxy,
  type NetworkResolver,
  policyFromLaunchConfig,
  startNetworkProxy,
} from '@execd/network-proxy';
import {
  ExecError,
  type ExecParams,
  type Logger,
  type ManagedNetwork,
  type NetworkDecision,
  type NetworkPolicyRequestParams,
  type NetworkPolicyResponse,
  type NetworkProxyLaunchConfig,
  type NetworkRequestProtocol,
  RpcError,
} from '@execd/protocol';
import type { NetworkDenial, NetworkProtocol } from '@execd/protocol/contract';
import type { SpawnedNetwork } from '@execd/sandboxing';
import type { ProcessNotification } from '../types.ts';

/** Longest host name a `network/policyRequest` carries (DNS's limit, as the original). */
export const NETWORK_POLICY_HOST_MAX_BYTES = 253;

/** Longest decision reason kept from a client's answer; longer ones are cut (as the original's limit). */
export const NETWORK_POLICY_REASON_MAX_BYTES = 1024;

/**
 * Asks whoever decides for this process's session (the attached client, over
 * `network/policyRequest`) whether a host may be reached. Rejects when nobody can answer (no
 * client attached, the connection went away, an error reply); `cancelSignal` aborts the question.
 */
export type NetworkPolicyRequester = (
  params: NetworkPolicyRequestParams,
  options: { readonly cancelSignal: AbortSignal },
) => Promise<NetworkPolicyResponse>;

/** Options of {@link ProcessNetwork.start}. */
export interface ProcessNetworkOptions {
  readonly params: ExecParams;
  /** Asks the client; undefined: nobody can answer (callbacks then deny, uncached). */
  readonly requester: NetworkPolicyRequester | undefined;
  /** Name resolution of the proxy (default: the host's `getaddrinfo`). */
  readonly resolver?: NetworkResolver | undefined;
  readonly emit: (notification: ProcessNotification) => void;
  readonly logger: Logger;
}

/**
 * Folds the original's launch form (`networkProxy.proxy`, as Codex 0.169.0 sends it with
 * `enforceManagedNetwork`) into execd's: `proxy.domains` entries join the allow and deny lists,
 * `proxy.allowLocalBinding` the managed network's, and `enabled: false` allows no domain. A
 * `limited` mode (read-only methods) is refused with -32602 rather than run with more access.
 */
export function effectiveLaunchConfig(params: ExecParams): {
  readonly networkProxy: NetworkProxyLaunchConfig | undefined;
  readonly managedNetwork: ManagedNetwork | undefined;
} {
  const proxy = params.networkProxy?.proxy;
  if (proxy === undefined)
    return { networkProxy: params.networkProxy, managedNetwork: params.managedNetwork };
  if (proxy.mode !== undefined && proxy.mode !== 'full') {
    throw new RpcError(
      'invalidParams',
      `networkProxy.proxy.mode \`${proxy.mode}\` is not supported by this executor (only \`full\`)`,
    );
  }
  const allowed = [...(params.networkProxy?.allowedDomains ?? [])];
  const denied = [...(params.networkProxy?.deniedDomains ?? [])];
  for (const [pattern, permission] of Object.entries(proxy.domains ?? {})) {
    if (permission === 'allow') allowed.push(pattern);
    else if (permission === 'deny') denied.push(pattern);
    else {
      throw new RpcError(
        'invalidParams',
        `networkProxy.proxy.domains: \`${pattern}\` must be \`allow\` or \`deny\`, got \`${permission}\``,
      );
    }
  }
  return {
    networkProxy: {
      ...params.networkProxy,
      allowedDomains: proxy.enabled === false ? [] : allowed,
      deniedDomains: denied,
    },
    managedNetwork: {
      loopbackPorts: params.managedNetwork?.loopbackPorts ?? [],
      allowLocalBinding:
        (params.managedNetwork?.allowLocalBinding ?? false) || proxy.allowLocalBinding === true,
    },
  };
}

/** The wire name of a proxy protocol (the original's snake_case names). */
export function wireProtocol(protocol: NetworkProtocol): NetworkRequestProtocol {
  if (protocol === 'https') return 'https_connect';
  if (protocol === 'socks5') return 'socks5_tcp';
  return 'http';
}

/** A decision record as `network/policyDecision` params. */
export function decisionNotification(processId: string, record: NetworkDecisionRecord): ProcessNotification {
  return {
    method: 'network/policyDecision',
    params: {
      processId,
      request: { protocol: wireProtocol(record.protocol), host: record.host, port: record.port },
      decision: record.decision,
      rule: record.rule,
      ...(record.reason === undefined ? {} : { reason: record.reason }),
      timestamp: new Date(record.timestampMs).toISOString(),
    },
  };
}

function truncateReason(decision: NetworkDecision): NetworkDeciderAnswer {
  if (decision.type === 'allow' || decision.reason === undefined) return decision;
  const bytes = Buffer.from(decision.reason, 'utf8');
  if (bytes.byteLength <= NETWORK_POLICY_REASON_MAX_BYTES) return decision;
  // Cut on a character boundary: decoding drops a trailing partial character.
  const reason = new TextDecoder()
    .decode(bytes.subarray(0, NETWORK_POLICY_REASON_MAX_BYTES))
    .replace(/\uFFFD$/, '');
  return { ...decision, reason };
}

/**
 * The managed network of one `proxied` process: its own proxy (allow/deny lists, loopback ports,
 * the client as decider), the bridge its spawn started, every decision forwarded as a
 * `network/policyDecision` notification, and its denials kept for "approve and retry".
 * Closed when the process closes (exit and streams ended), or when its start fails.
 */
export class ProcessNetwork implements AsyncDisposable {
  /** The process's proxy (one per process: decider answers are cached per proxy). */
  readonly proxy: NetworkProxy;
  readonly #cancel: AbortController;
  readonly #subscription: Disposable;
  readonly #logger: Logger;
  #spawned: SpawnedNetwork | undefined;
  #closing: Promise<void> | undefined;

  private constructor(proxy: NetworkProxy, cancel: AbortController, options: ProcessNetworkOptions) {
    this.proxy = proxy;
    this.#cancel = cancel;
    this.#logger = options.logger;
    const { processId } = options.params;
    this.#subscription = proxy.onDecision((record) => options.emit(decisionNotification(processId, record)));
  }

  /**
   * Starts the process's proxy from `networkProxy` and `managedNetwork` (a bad pattern, port or
   * timeout throws `RpcError('invalidParams')`). With callbacks on (`policyCallbacks` or a
   * `policyDecisionTimeoutMs`), hosts no pattern matches are asked through `requester`.
   */
  static async start(options: ProcessNetworkOptions): Promise<ProcessNetwork> {
    const { params } = options;
    const launch = effectiveLaunchConfig(params);
    const policy = policyFromLaunchConfig(launch.networkProxy, launch.managedNetwork);
    const cancel = new AbortController();
    const proxy = await startNetworkProxy({
      allowedDomains: policy.allowedDomains,
      deniedDomains: policy.deniedDomains,
      loopbackPorts: policy.loopbackPorts,
      allowLocalAddresses: launch.managedNetwork?.allowLocalBinding ?? false,
      decider: policy.useDecider ? askRequester(params.processId, options, cancel.signal) : undefined,
      deciderTimeoutMs: policy.deciderTimeoutMs,
      resolver: options.resolver,
      logger: options.logger,
    });
    options.logger.debug('process network proxy started', {
      processId: params.processId,
      decider: policy.useDecider,
      httpSocketPath: proxy.httpSocketPath,
    });
    return new ProcessNetwork(proxy, cancel, options);
  }

  /** Takes ownership of the bridge the spawn started (closed with this network). */
  attach(spawned: SpawnedNetwork | undefined): void {
    this.#spawned = spawned;
    if (spawned !== undefined && this.#closing !== undefined) void spawned.close();
  }

  /** Every connection the proxy refused so far (the newest 1000), oldest first. */
  denials(): readonly NetworkDenial[] {
    return this.proxy.denials();
  }

  /**
   * `process/terminate`: questions waiting for the client are abandoned (those connections are
   * denied, `deciderFailed`, uncached) and no new ones are asked. Idempotent.
   */
  cancelPendingDecisions(): void {
    if (this.#cancel.signal.aborted) return;
    this.#cancel.abort(new ExecError('aborted', 'network policy decisions cancelled by process/terminate'));
  }

  /** Cancels pending decisions, stops the bridge, then the proxy. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #shutdown(): Promise<void> {
    this.cancelPendingDecisions();
    try {
      await this.#spawned?.close();
    } finally {
      await this.proxy.close();
      this.#subscription[Symbol.dispose]();
      this.#logger.debug('process network closed', { httpSocketPath: this.proxy.httpSocketPath });
    }
  }
}

/** The proxy's decider for one process: `network/policyRequest` through `requester`. */
function askRequester(
  processId: string,
  options: ProcessNetworkOptions,
  cancelled: AbortSignal,
): NetworkDecider {
  return async (request, { cancelSignal }) => {
    // A throw denies this connection without caching the answer: the next attempt asks again.
    if (cancelled.aborted) throw cancelled.reason;
    const requester = options.requester;
    if (requester === undefined)
      throw new ExecError('unsupported', 'no client can answer network/policyRequest here');
    if (Buffer.byteLength(request.host, 'utf8') > NETWORK_POLICY_HOST_MAX_BYTES)
      throw new ExecError('invalidParams', `host name longer than ${NETWORK_POLICY_HOST_MAX_BYTES} bytes`);
    const response = await requester(
      {
        processId,
        request: { protocol: wireProtocol(request.protocol), host: request.host, port: request.port },
      },
      { cancelSignal: AbortSignal.any([cancelSignal, cancelled]) },
    );
    return truncateReason(response.decision);
  };
}
