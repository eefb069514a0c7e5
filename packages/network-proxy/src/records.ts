import type { NetworkPolicyDecisionNotification, NetworkRequestProtocol } from '@execd/protocol';

/** How the command reached the proxy: plain HTTP forward, HTTP `CONNECT` (usually HTTPS) or SOCKS5 `CONNECT`. */
export type NetworkProtocol = 'http' | 'https' | 'socks5';

/** One outbound connection attempt, as the proxy sees it (the wire's `NetworkRequest`). */
export interface NetworkRequestInfo {
  readonly protocol: NetworkProtocol;
  /** Normalised host name or IP literal, as the command asked for it (before resolution). */
  readonly host: string;
  readonly port: number;
}

/**
 * Why a connection was refused (stable codes: branch on these, not on `message`).
 * - `denied`: a deny pattern matched (deny wins over every allow);
 * - `notAllowed`: no allow pattern matched and there is no decider;
 * - `notAllowedLocal`: the host is, or resolved to, a loopback/private/link-local address that the
 *   policy does not allow explicitly (this also stops DNS-rebinding tricks), or a port of the
 *   executor itself on this host (rule `executor-port:<port>`);
 * - `invalidHost`: the request named no usable host;
 * - `deciderDenied` / `deciderAsk`: the decider answered deny / ask (`ask` means a person must
 *   approve; unified-exec can offer "approve and retry");
 * - `deciderTimeout` / `deciderFailed`: the decider did not answer in time / threw;
 * - `proxyClosed`: the proxy shut down while the request waited.
 */
export type NetworkDenialReason =
  | 'denied'
  | 'notAllowed'
  | 'notAllowedLocal'
  | 'invalidHost'
  | 'deciderDenied'
  | 'deciderAsk'
  | 'deciderTimeout'
  | 'deciderFailed'
  | 'proxyClosed';

/** Every decision the proxy applied, allowed or not. */
export interface NetworkDecisionRecord extends NetworkRequestInfo {
  readonly decision: 'allow' | 'deny';
  /**
   * What decided: `allow:<pattern>`, `deny:<pattern>`, `loopbackPorts`, `local-address`,
   * `resolved-local-address:<ip>`, `executor-port:<port>`, `no-match`, `decider`, `invalid-host`
   * or `proxy-closed`.
   */
  readonly rule: string;
  /** Set when `decision` is `deny`. */
  readonly reason?: NetworkDenialReason;
  /** Milliseconds since the epoch. */
  readonly timestampMs: number;
}

/** A refused connection, shaped for `network/policyDecision` and for "approve and retry". */
export interface NetworkDenial extends NetworkRequestInfo {
  readonly kind: 'network';
  readonly rule: string;
  readonly reason: NetworkDenialReason;
  /** One sentence for people, naming the host and the reason (also the body of the 403). */
  readonly message: string;
  readonly timestampMs: number;
}

/**
 * The wire name of a proxy protocol (the original's snake_case names): `http` stays `http`, an
 * HTTP `CONNECT` tunnel is `https_connect`, a SOCKS5 `CONNECT` is `socks5_tcp`.
 */
export function toWireProtocol(protocol: NetworkProtocol): NetworkRequestProtocol {
  if (protocol === 'https') return 'https_connect';
  if (protocol === 'socks5') return 'socks5_tcp';
  return 'http';
}

/**
 * Maps a decision record to the `network/policyDecision` notification params for `processId`:
 * the protocol in its wire name, the denial `reason` (absent when allowed) and the decision's
 * time as RFC 3339 UTC.
 */
export function toPolicyDecisionNotification(
  processId: string,
  record: NetworkDecisionRecord,
): NetworkPolicyDecisionNotification {
  return {
    processId,
    request: { protocol: toWireProtocol(record.protocol), host: record.host, port: record.port },
    decision: record.decision,
    rule: record.rule,
    ...(record.reason === undefined ? {} : { reason: record.reason }),
    timestamp: new Date(record.timestampMs).toISOString(),
  };
}
