import { isIP } from 'node:net';
import type { Logger } from '@execd/protocol';
import type {
  NetworkDenial,
  NetworkDenialReason,
  NetworkProtocol,
  NetworkRequestInfo,
} from '@execd/protocol/contract';
import type { DeciderCache } from '../decider.ts';
import { isLocalhostName, normalizeHost } from '../policy/address.ts';
import type { NetworkPolicy } from '../policy/network-policy.ts';
import type { NetworkResolver } from '../resolver.ts';
import type { DecisionLog } from './decision-log.ts';
import { executorPortTarget } from './executor-ports.ts';
import { denialMessage, formatTarget } from './messages.ts';

/** The addresses `localhost` means; never resolved through DNS or /etc/hosts. */
const LOCALHOST_ADDRESSES: readonly string[] = ['127.0.0.1', '::1'];

/** The outcome of authorising one connection attempt. */
export type Authorization =
  /** Connect to exactly these checked addresses (pinned: never re-resolve). */
  | { readonly ok: true; readonly request: NetworkRequestInfo; readonly addresses: readonly string[] }
  /** Refused by policy (recorded as a denial); answer 403 / SOCKS 0x02. */
  | { readonly ok: false; readonly denial: NetworkDenial }
  /** Allowed, but the name did not resolve; answer 502 / SOCKS 0x04. */
  | { readonly ok: false; readonly denial?: undefined; readonly unresolved: string };

/**
 * Runs rules, decider, resolution, the resolved-address check and the executor-port check;
 * records exactly one decision.
 */
export class Gate {
  readonly #policy: NetworkPolicy;
  readonly #decider: DeciderCache | undefined;
  readonly #resolver: NetworkResolver;
  readonly #log: DecisionLog;
  readonly #logger: Logger;
  readonly #reservedPorts: ReadonlySet<number>;

  constructor(options: {
    policy: NetworkPolicy;
    decider: DeciderCache | undefined;
    resolver: NetworkResolver;
    log: DecisionLog;
    logger: Logger;
    /** Ports never reached on a local address, besides the executor's own listening ports. */
    reservedPorts: ReadonlySet<number>;
  }) {
    this.#policy = options.policy;
    this.#decider = options.decider;
    this.#resolver = options.resolver;
    this.#log = options.log;
    this.#logger = options.logger;
    this.#reservedPorts = options.reservedPorts;
  }

  async authorize(protocol: NetworkProtocol, rawHost: string, port: number): Promise<Authorization> {
    const host = normalizeHost(rawHost);
    if (host === undefined || !Number.isInteger(port) || port < 1 || port > 65535) {
      const request = { protocol, host: rawHost, port };
      return this.#deny(request, 'invalidHost', 'invalid-host', undefined);
    }
    const request: NetworkRequestInfo = { protocol, host, port };
    const verdict = this.#policy.evaluate(host, port);
    let rule: string;
    if (verdict.kind === 'deny') return this.#deny(request, verdict.reason, verdict.rule, undefined);
    if (verdict.kind === 'allow') {
      rule = verdict.rule;
    } else if (this.#decider) {
      const outcome = await this.#decider.decide(request);
      if (outcome.kind === 'deny') return this.#deny(request, outcome.reason, 'decider', outcome.detail);
      rule = 'decider';
    } else {
      return this.#deny(request, 'notAllowed', 'no-match', undefined);
    }
    let addresses: readonly string[];
    if (isIP(host) !== 0) addresses = [host];
    else if (isLocalhostName(host)) addresses = LOCALHOST_ADDRESSES;
    else {
      try {
        addresses = (await this.#resolver(host)).filter((address) => isIP(address) !== 0);
      } catch (error) {
        this.#logger.debug('network proxy could not resolve host', { host, error });
        addresses = [];
      }
      if (addresses.length === 0) {
        this.#record(request, rule);
        return { ok: false, unresolved: `cannot resolve ${host}` };
      }
      const checked = this.#policy.checkAddresses(addresses, port, { host, rule });
      if (!checked.ok)
        return this.#deny(request, 'notAllowedLocal', checked.rule, `it resolved to ${checked.address}`);
    }
    // Whatever the lists say: never the executor's own ports on this host (its server, its proxy).
    const own = await executorPortTarget(addresses, port, this.#reservedPorts);
    if (own !== undefined) {
      const detail = `${formatTarget(own, port)} is a port of the execd executor itself`;
      return this.#deny(request, 'notAllowedLocal', `executor-port:${port}`, detail);
    }
    return this.#allow(request, rule, addresses);
  }

  #record(request: NetworkRequestInfo, rule: string): void {
    this.#log.allow({ ...request, decision: 'allow', rule, timestampMs: Date.now() });
    this.#logger.debug('network request allowed', { ...request, rule });
  }

  #allow(request: NetworkRequestInfo, rule: string, addresses: readonly string[]): Authorization {
    this.#record(request, rule);
    return { ok: true, request, addresses };
  }

  #deny(
    request: NetworkRequestInfo,
    reason: NetworkDenialReason,
    rule: string,
    detail: string | undefined,
  ): Authorization {
    const timestampMs = Date.now();
    const message = denialMessage(reason, formatTarget(request.host, request.port), detail);
    const denial: NetworkDenial = { kind: 'network', ...request, rule, reason, message, timestampMs };
    this.#log.deny({ ...request, decision: 'deny', rule, reason, timestampMs }, denial);
    this.#logger.debug('network request denied', { ...request, rule, reason });
    return { ok: false, denial };
  }
}
