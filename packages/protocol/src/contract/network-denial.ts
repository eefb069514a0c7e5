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

/**
 * A refused connection, shaped for `network/policyDecision` and for "approve and retry": what a
 * managed network's proxy records, and what a process reports through `networkDenials()`, the
 * same in-process and remote.
 */
export interface NetworkDenial extends NetworkRequestInfo {
  readonly kind: 'network';
  readonly rule: string;
  readonly reason: NetworkDenialReason;
  /** One sentence for people, naming the host and the reason (also the body of the 403). */
  readonly message: string;
  readonly timestampMs: number;
}
