import { isIP } from 'node:net';
import { RpcError } from '@execd/protocol';
import { classifyAddress, isLocalhostName, normalizeHost } from './address.ts';
import { type DomainPattern, matchesDomainPattern, parseDomainPattern } from './domain-pattern.ts';

/** The static part of a proxy's policy. Every field is optional; the default denies everything. */
export interface NetworkPolicyOptions {
  /** Patterns that may be reached (syntax: `DomainPattern`). Empty: nothing is allowed by rule. */
  readonly allowedDomains?: readonly string[] | undefined;
  /** Patterns that are never reached; deny wins over allow, over the decider and over loopbackPorts. */
  readonly deniedDomains?: readonly string[] | undefined;
  /**
   * Ports on the host's loopback interface the command may use (`managedNetwork.loopbackPorts`):
   * `127.0.0.1:P`, `[::1]:P` and `localhost:P` are allowed for these ports, and the bridge mirrors
   * each one into the sandbox so `curl http://127.0.0.1:P` works there too. A port the executor
   * itself listens on stays refused (the proxy checks that after the policy).
   */
  readonly loopbackPorts?: readonly number[] | undefined;
  /**
   * Allow loopback/private/link-local destinations that an allow pattern other than the catch-all
   * `*` matches even when they are not listed explicitly, including host names (allowed by such a
   * pattern or by the decider) that resolve to them (the original's `allow_local_binding` for its
   * proxy). `*` never opens local destinations, with or without this. Default false.
   */
  readonly allowLocalAddresses?: boolean | undefined;
}

/** What the static rules say about one host and port. */
export type RuleVerdict =
  | { readonly kind: 'allow'; readonly rule: string }
  | { readonly kind: 'deny'; readonly reason: 'denied' | 'notAllowedLocal'; readonly rule: string }
  | { readonly kind: 'noMatch' };

/** Result of checking the addresses a host name resolved to. */
export type AddressVerdict =
  | { readonly ok: true }
  | { readonly ok: false; readonly address: string; readonly rule: string };

/** Checks a list of TCP ports; throws `RpcError('invalidParams')` naming the option and the value. */
export function validatePorts(option: string, ports: readonly number[]): ReadonlySet<number> {
  for (const port of ports) {
    if (!Number.isInteger(port) || port < 1 || port > 65535) {
      throw new RpcError('invalidParams', `${option}: ${JSON.stringify(port)} is not a port (1-65535)`);
    }
  }
  return new Set(ports);
}

/** A compiled, immutable policy: pattern matching plus the local-address rules. */
export class NetworkPolicy {
  readonly #allowed: readonly DomainPattern[];
  readonly #denied: readonly DomainPattern[];
  readonly #loopbackPorts: ReadonlySet<number>;
  readonly #allowLocalAddresses: boolean;

  /** Compiles and validates; throws `RpcError('invalidParams')` naming a bad entry. */
  constructor(options: NetworkPolicyOptions = {}) {
    this.#allowed = (options.allowedDomains ?? []).map(parseDomainPattern);
    this.#denied = (options.deniedDomains ?? []).map(parseDomainPattern);
    this.#loopbackPorts = validatePorts('loopbackPorts', options.loopbackPorts ?? []);
    this.#allowLocalAddresses = options.allowLocalAddresses ?? false;
  }

  /** The validated loopback ports, ascending. */
  get loopbackPorts(): readonly number[] {
    return [...this.#loopbackPorts].sort((a, b) => a - b);
  }

  /**
   * Applies the rules to a normalised host (see `normalizeHost`) in this order: deny patterns;
   * for IP literals and `localhost`, the local-address rule (loopbackPorts, an exact allow entry,
   * or `allowLocalAddresses` with a matching allow pattern other than `*`; otherwise denied
   * `notAllowedLocal`, never left to the decider); allow patterns; otherwise `noMatch` (the
   * decider's turn).
   */
  evaluate(host: string, port: number): RuleVerdict {
    const denied = this.#denied.find((p) => matchesDomainPattern(p, host, port));
    if (denied) return { kind: 'deny', reason: 'denied', rule: `deny:${denied.source}` };
    const addressClass = isLocalhostName(host)
      ? 'loopback'
      : isIP(host) !== 0
        ? classifyAddress(host)
        : 'public';
    if (addressClass !== 'public') {
      if (addressClass === 'loopback' && this.#loopbackPorts.has(port))
        return { kind: 'allow', rule: 'loopbackPorts' };
      const explicit = this.#explicitEntry(host, port);
      if (explicit) return { kind: 'allow', rule: `allow:${explicit.source}` };
      const specific = this.#allowLocalAddresses
        ? this.#allowed.find((p) => p.kind !== 'any' && matchesDomainPattern(p, host, port))
        : undefined;
      if (specific) return { kind: 'allow', rule: `allow:${specific.source}` };
      return { kind: 'deny', reason: 'notAllowedLocal', rule: 'local-address' };
    }
    const allowed = this.#allowed.find((p) => matchesDomainPattern(p, host, port));
    return allowed ? { kind: 'allow', rule: `allow:${allowed.source}` } : { kind: 'noMatch' };
  }

  /**
   * Checks the addresses a host name resolved to, so a public-looking name cannot lead to a
   * loopback or private address (DNS rebinding): each non-public address must be a loopback
   * address on a loopbackPort, be listed exactly in the allow list, or `allowLocalAddresses` be on
   * and the name (`allowedAs.host`) have been allowed by the decider or match an allow pattern other
   * than the catch-all `*`. Without `allowedAs`, `allowLocalAddresses` does not apply.
   * The proxy then connects only to these checked addresses.
   */
  checkAddresses(
    addresses: readonly string[],
    port: number,
    allowedAs?: { readonly host: string; readonly rule: string },
  ): AddressVerdict {
    const opensLocal =
      this.#allowLocalAddresses &&
      allowedAs !== undefined &&
      (allowedAs.rule === 'decider' ||
        this.#allowed.some((p) => p.kind !== 'any' && matchesDomainPattern(p, allowedAs.host, port)));
    for (const address of addresses) {
      const addressClass = classifyAddress(address);
      if (addressClass === 'public' || opensLocal) continue;
      if (addressClass === 'loopback' && this.#loopbackPorts.has(port)) continue;
      const normalized = normalizeHost(address) ?? address;
      if (this.#explicitEntry(normalized, port)) continue;
      return { ok: false, address, rule: `resolved-local-address:${address}` };
    }
    return { ok: true };
  }

  #explicitEntry(host: string, port: number): DomainPattern | undefined {
    return this.#allowed.find((p) => p.kind === 'exact' && matchesDomainPattern(p, host, port));
  }
}
