import * as v from 'valibot';
import { opt, ProcessId, UInt } from './common.ts';

const Port = v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(65535));

/** Managed-network facts for a process (loopback ports it may use). */
export const ManagedNetwork = v.object({
  loopbackPorts: v.optional(v.array(Port), []),
  allowLocalBinding: v.optional(v.boolean(), false),
});
export type ManagedNetwork = v.InferOutput<typeof ManagedNetwork>;

/**
 * Launch configuration of the executor-side network proxy. The original's fields are passed
 * through untouched (loose object); execd reads the allow-list fields below.
 */
export const NetworkProxyLaunchConfig = v.looseObject({
  /** Domain patterns (`*.npmjs.org`, `example.com`, `example.com:8443`) allowed. */
  allowedDomains: opt(v.array(v.string())),
  /** Domain patterns denied; deny wins over allow. */
  deniedDomains: opt(v.array(v.string())),
  /** Ask the client (`network/policyRequest`) for hosts no rule matches. */
  policyCallbacks: opt(v.boolean()),
  /** How long to wait for the client's decision before denying, in ms (must be non-zero). */
  policyDecisionTimeoutMs: opt(UInt),
});
export type NetworkProxyLaunchConfig = v.InferOutput<typeof NetworkProxyLaunchConfig>;

/** One outbound connection attempt, as seen by the proxy. */
export const NetworkRequest = v.object({
  /** `http`, `https` (CONNECT) or `socks5`. */
  protocol: v.string(),
  host: v.string(),
  port: Port,
});
export type NetworkRequest = v.InferOutput<typeof NetworkRequest>;

/** Server -> client request `network/policyRequest`. */
export const NetworkPolicyRequestParams = v.object({ processId: ProcessId, request: NetworkRequest });
export type NetworkPolicyRequestParams = v.InferOutput<typeof NetworkPolicyRequestParams>;

/** The client's answer to `network/policyRequest`: allow, deny, or ask a person (with a reason). */
export const NetworkDecision = v.variant('type', [
  v.object({ type: v.literal('allow') }),
  v.object({ type: v.literal('deny'), reason: opt(v.string()) }),
  v.object({ type: v.literal('ask'), reason: opt(v.string()) }),
]);
export type NetworkDecision = v.InferOutput<typeof NetworkDecision>;

/** `network/policyRequest` result. */
export const NetworkPolicyResponse = v.object({ decision: NetworkDecision });
export type NetworkPolicyResponse = v.InferOutput<typeof NetworkPolicyResponse>;

/** `network/policyDecision` notification: a decision the proxy applied (for audit and approval). */
export const NetworkPolicyDecisionNotification = v.object({
  processId: ProcessId,
  request: NetworkRequest,
  decision: v.picklist(['allow', 'deny']),
  /** The rule or reason that decided it. */
  rule: opt(v.string()),
});
export type NetworkPolicyDecisionNotification = v.InferOutput<typeof NetworkPolicyDecisionNotification>;
