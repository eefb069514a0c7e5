import type { ManagedNetwork, NetworkProxyLaunchConfig } from '@execd/protocol';
import { DEFAULT_DECIDER_TIMEOUT_MS, validateDeciderTimeout } from './decider.ts';
import type { NetworkPolicyOptions } from './policy/network-policy.ts';

/** What `process/start`'s network fields ask of the proxy (the exec-server adds the decider). */
export interface LaunchNetworkPolicy extends NetworkPolicyOptions {
  /** True when the client wants `network/policyRequest` for hosts no pattern matches. */
  readonly useDecider: boolean;
  /** The decision timeout to pass as `deciderTimeoutMs` (validated; set when `useDecider`). */
  readonly deciderTimeoutMs: number | undefined;
}

/**
 * Maps `ExecParams.networkProxy` and `ExecParams.managedNetwork` to proxy options: the allow and
 * deny lists, `managedNetwork.loopbackPorts`, and whether to ask the client. Callbacks are on when
 * `policyCallbacks` is true or a `policyDecisionTimeoutMs` is given (the original enables them by
 * the timeout); a zero timeout throws `RpcError('invalidParams')` with the original's message.
 */
export function policyFromLaunchConfig(
  networkProxy: NetworkProxyLaunchConfig | undefined,
  managedNetwork: ManagedNetwork | undefined,
): LaunchNetworkPolicy {
  const timeout = networkProxy?.policyDecisionTimeoutMs;
  if (timeout !== undefined) validateDeciderTimeout(timeout);
  const useDecider = networkProxy?.policyCallbacks === true || timeout !== undefined;
  return {
    allowedDomains: networkProxy?.allowedDomains ?? [],
    deniedDomains: networkProxy?.deniedDomains ?? [],
    loopbackPorts: managedNetwork?.loopbackPorts ?? [],
    useDecider,
    deciderTimeoutMs: useDecider ? (timeout ?? DEFAULT_DECIDER_TIMEOUT_MS) : undefined,
  };
}
