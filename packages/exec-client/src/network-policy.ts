import type { NetworkDecision, NetworkPolicyDecisionNotification } from '@execd/protocol';
import {
  type NetworkDenial,
  type NetworkDenialReason,
  type NetworkProtocol,
  toNetworkDecision,
} from '@execd/protocol/contract';

/** Receives every `network/policyDecision` the server pushes (allowed or denied, any process). */
export type NetworkPolicyDecisionListener = (decision: NetworkPolicyDecisionNotification) => void;

/**
 * Reason sent with a `deny` the decider gave none for: the original server requires a reason on
 * `deny` and `ask`, so the client always sends one.
 */
export const DEFAULT_DENY_REASON = 'denied by the exec-server client';

/** Reason sent with an `ask` the decider gave none for (see {@link DEFAULT_DENY_REASON}). */
export const DEFAULT_ASK_REASON = 'the exec-server client asks for approval';

/**
 * A decider's answer as the wire's `NetworkDecision`, with a non-empty `reason` on `deny` and
 * `ask`. Throws a `protocol` ExecError for anything else (answered -32603).
 */
export function toWireDecision(answer: unknown): NetworkDecision {
  const decision = toNetworkDecision(answer);
  if (decision.type === 'allow') return decision;
  const fallback = decision.type === 'deny' ? DEFAULT_DENY_REASON : DEFAULT_ASK_REASON;
  return { type: decision.type, reason: decision.reason ?? fallback };
}

const PROTOCOLS: Readonly<Record<string, NetworkProtocol>> = {
  http: 'http',
  https_connect: 'https',
  socks5_tcp: 'socks5',
  socks5_udp: 'socks5',
};

const DENIAL_REASONS: ReadonlySet<string> = new Set<NetworkDenialReason>([
  'denied',
  'notAllowed',
  'notAllowedLocal',
  'invalidHost',
  'deciderDenied',
  'deciderAsk',
  'deciderTimeout',
  'deciderFailed',
  'proxyClosed',
]);

/**
 * A `deny` decision as the same record `LocalExecProcess.networkDenials()` holds (protocol in the
 * proxy's names, `timestampMs` from the RFC 3339 `timestamp`). Undefined for an allow, and for a
 * denial whose protocol or reason this client does not know (no execd server sends those).
 * `message` names the host and the reason; the decider's own reason text is not on the wire.
 */
export function denialFromDecision(decision: NetworkPolicyDecisionNotification): NetworkDenial | undefined {
  const { request, reason } = decision;
  const protocol = PROTOCOLS[request.protocol];
  if (decision.decision !== 'deny' || protocol === undefined) return undefined;
  if (reason === undefined || !DENIAL_REASONS.has(reason)) return undefined;
  const rule = decision.rule ?? 'unknown';
  const target = request.host.includes(':')
    ? `[${request.host}]:${request.port}`
    : `${request.host}:${request.port}`;
  const parsedMs = decision.timestamp === undefined ? Number.NaN : Date.parse(decision.timestamp);
  return {
    kind: 'network',
    protocol,
    host: request.host,
    port: request.port,
    rule,
    reason: reason as NetworkDenialReason,
    message: `${target} is denied by the network policy (reason: ${reason}, rule: ${rule})`,
    timestampMs: Number.isNaN(parsedMs) ? Date.now() : parsedMs,
  };
}
