import type { NetworkPolicyDecisionNotification, NetworkRequestProtocol } from '@execd/protocol';
import type { NetworkDenialReason, NetworkProtocol, NetworkRequestInfo } from '@execd/protocol/contract';

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
