import type { NetworkPolicyResponse } from '@execd/protocol';
import { type NetworkPolicyDecider, toNetworkDecision } from '@execd/protocol/contract';
import type { NetworkPolicyRequester } from './process-network.ts';

/**
 * A per-start `networkPolicyDecider` as the requester of its one process: the decider's answer
 * becomes the `network/policyRequest` result; an answer that is no decision throws (the
 * connection is then denied without the answer being remembered, as a failed requester).
 */
export function deciderRequester(decider: NetworkPolicyDecider): NetworkPolicyRequester {
  return async (params, options): Promise<NetworkPolicyResponse> => ({
    decision: toNetworkDecision(await decider(params, options)),
  });
}
