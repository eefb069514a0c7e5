import * as v from 'valibot';
import { opt, ProcessId, UInt } from './common.ts';

const Port = v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(65535));

/** Managed-network facts for a process. */
export const ManagedNetwork = v.object({
  /**
   * Ports on the executor's loopback interface the command may use through the managed proxy
   * (`127.0.0.1:P` inside the sandbox reaches the host's `127.0.0.1:P`).
   */
  loopbackPorts: v.optional(v.array(Port), []),
  /**
   * Let allow-list patterns match loopback/private/link-local destinations (and names resolving to
   * them); without it such destinations need an exact allow entry or `loopbackPorts`.
   */
  allowLocalBinding: v.optional(v.boolean(), false),
});
export type ManagedNetwork = v.InferOutput<typeof ManagedNetwork>;

/**
 * The proxy settings Codex >= 0.169 sends (`RemoteNetworkProxyConfig`): `domains` maps a domain
 * pattern to `allow` or `deny`. Other fields (`enableSocks5`, `unixSockets`, ...) pass through.
 */
export const RemoteNetworkProxyConfig = v.looseObject({
  /** `false`: the client runs no proxy (execd then allows no domain). */
  enabled: opt(v.boolean()),
  /** `full`, or `limited` (read-only methods; execd refuses it rather than allow more). */
  mode: opt(v.string()),
  /** Domain pattern -> `allow` | `deny`. */
  domains: opt(v.record(v.string(), v.string())),
  /** Let allow patterns match local destinations (as `ManagedNetwork.allowLocalBinding`). */
  allowLocalBinding: opt(v.boolean()),
});
export type RemoteNetworkProxyConfig = v.InferOutput<typeof RemoteNetworkProxyConfig>;

/**
 * Launch configuration of the executor-side network proxy, in either form: execd's
 * (`allowedDomains`, `deniedDomains`, `policyCallbacks`) or the original's
 * `RemoteNetworkProxyLaunchConfig` (`proxy`, `auditMetadata`, `environmentId`, `executionId`,
 * `policyDecisionTimeoutMs`), which Codex 0.169.0 sends with `enforceManagedNetwork: true`. Other
 * fields pass through untouched (loose object).
 */
export const NetworkProxyLaunchConfig = v.looseObject({
  /** The original's proxy settings (its form); merged with the execd fields below. */
  proxy: opt(RemoteNetworkProxyConfig),
  /** Domain patterns (`*.npmjs.org`, `example.com`, `example.com:8443`) allowed. */
  allowedDomains: opt(v.array(v.string())),
  /** Domain patterns denied; deny wins over allow. */
  deniedDomains: opt(v.array(v.string())),
  /**
   * Ask the client (`network/policyRequest`) about hosts no pattern matches. A
   * `policyDecisionTimeoutMs` also turns this on (the original enables callbacks by the timeout).
   */
  policyCallbacks: opt(v.boolean()),
  /** How long to wait for the client's decision before denying, in ms (must be non-zero; default 30 000). */
  policyDecisionTimeoutMs: opt(UInt),
});
export type NetworkProxyLaunchConfig = v.InferOutput<typeof NetworkProxyLaunchConfig>;

/**
 * How the command reached the proxy, in the original's snake_case names: `http` (a plain
 * forwarded request), `https_connect` (an HTTP `CONNECT` tunnel, usually TLS), `socks5_tcp` (a
 * SOCKS5 `CONNECT`), `socks5_udp` (SOCKS5 UDP; the original's, never sent by execd).
 */
export const NetworkRequestProtocol = v.picklist(['http', 'https_connect', 'socks5_tcp', 'socks5_udp']);
export type NetworkRequestProtocol = v.InferOutput<typeof NetworkRequestProtocol>;

/** One outbound connection attempt, as seen by the proxy. */
export const NetworkRequest = v.object({
  /**
   * One of {@link NetworkRequestProtocol}'s names. Decoded as any string, so that a peer that
   * knows a newer protocol name is not refused; execd sends only those four.
   */
  protocol: v.string(),
  /** The normalised host name or IP literal the command asked for (before resolution). */
  host: v.string(),
  port: Port,
});
export type NetworkRequest = v.InferOutput<typeof NetworkRequest>;

/** Server -> client request `network/policyRequest`: may the process reach this host? */
export const NetworkPolicyRequestParams = v.object({ processId: ProcessId, request: NetworkRequest });
export type NetworkPolicyRequestParams = v.InferOutput<typeof NetworkPolicyRequestParams>;

/**
 * The client's answer to `network/policyRequest`: allow, deny, or ask a person (both deny the
 * connection; `ask` tells the agent a person may approve and retry). The original requires a
 * `reason` on `deny` and `ask`; execd accepts it absent. At most 1024 bytes of it are kept.
 */
export const NetworkDecision = v.variant('type', [
  v.object({ type: v.literal('allow') }),
  v.object({ type: v.literal('deny'), reason: opt(v.string()) }),
  v.object({ type: v.literal('ask'), reason: opt(v.string()) }),
]);
export type NetworkDecision = v.InferOutput<typeof NetworkDecision>;

/** `network/policyRequest` result. */
export const NetworkPolicyResponse = v.object({ decision: NetworkDecision });
export type NetworkPolicyResponse = v.InferOutput<typeof NetworkPolicyResponse>;

/**
 * `network/policyDecision` notification: a decision the process's proxy applied (audit, and the
 * "approve and retry" offer of a denied host). Sent for every decision, allowed or denied.
 */
export const NetworkPolicyDecisionNotification = v.object({
  processId: ProcessId,
  request: NetworkRequest,
  decision: v.picklist(['allow', 'deny']),
  /**
   * What decided: `allow:<pattern>`, `deny:<pattern>`, `loopbackPorts`, `local-address`,
   * `resolved-local-address:<ip>`, `no-match`, `decider`, `invalid-host` or `proxy-closed`.
   */
  rule: opt(v.string()),
  /**
   * Why a connection was denied (absent when allowed): `denied`, `notAllowed`, `notAllowedLocal`,
   * `invalidHost`, `deciderDenied`, `deciderAsk`, `deciderTimeout`, `deciderFailed`, `proxyClosed`.
   */
  reason: opt(v.string()),
  /** When the decision was made, RFC 3339 in UTC (e.g. `2025-01-31T12:00:00.000Z`). */
  timestamp: opt(v.string()),
});
export type NetworkPolicyDecisionNotification = v.InferOutput<typeof NetworkPolicyDecisionNotification>;
