// @execd/network-proxy: the managed network for sandboxed commands (see README.md). It holds a
// network namespace and a proxy; it does not know how a sandbox is built (@execd/sandboxing
// puts the bridge's prefix and environment into its command line).

export type { NetworkBridge } from './bridge/network-bridge.ts';
export { NETWORK_PROXY_ACTIVE_ENV, NO_PROXY_HOSTS, proxyEnvironment } from './bridge/proxy-env.ts';
export {
  BRIDGE_START_TIMEOUT_MS,
  DEFAULT_BRIDGE_HTTP_PORT,
  DEFAULT_BRIDGE_SOCKS_PORT,
  type StartBridgeOptions,
  startBridge,
} from './bridge/start-bridge.ts';
export {
  DEFAULT_DECIDER_TIMEOUT_MS,
  type NetworkDecider,
  type NetworkDeciderAnswer,
  validateDeciderTimeout,
} from './decider.ts';
export { type LaunchNetworkPolicy, policyFromLaunchConfig } from './launch-config.ts';
export {
  NetworkProxy,
  type NetworkProxyOptions,
  SOCKS_HANDSHAKE_TIMEOUT_MS,
  startNetworkProxy,
  UPSTREAM_CONNECT_TIMEOUT_MS,
} from './network-proxy.ts';
export { type AddressClass, classifyAddress, normalizeHost } from './policy/address.ts';
export { type DomainPattern, matchesDomainPattern, parseDomainPattern } from './policy/domain-pattern.ts';
export { NetworkPolicy, type NetworkPolicyOptions, type RuleVerdict } from './policy/network-policy.ts';
export {
  type NetworkDecisionRecord,
  toPolicyDecisionNotification,
} from './records.ts';
export { createStaticResolver, type NetworkResolver, systemResolver } from './resolver.ts';
export type { ProxyTcpAddress } from './server/listen.ts';
