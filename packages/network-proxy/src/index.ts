// @execd/network-proxy: the managed network for sandboxed commands (see README.md).

export { isBwrapArgv, shareBridgeNetwork } from './bridge/bwrap-argv.ts';
export { NETWORK_PROXY_ACTIVE_ENV, NO_PROXY_HOSTS, proxyEnvironment } from './bridge/proxy-env.ts';
export {
  BRIDGE_START_TIMEOUT_MS,
  DEFAULT_BRIDGE_HTTP_PORT,
  DEFAULT_BRIDGE_SOCKS_PORT,
  NetworkBridge,
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
export { type LogFields, type Logger, NOOP_LOGGER } from './logger.ts';
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
  type NetworkDenial,
  type NetworkDenialReason,
  type NetworkProtocol,
  type NetworkRequestInfo,
  toPolicyDecisionNotification,
} from './records.ts';
export { createStaticResolver, type NetworkResolver, systemResolver } from './resolver.ts';
export type { ProxyTcpAddress } from './server/listen.ts';
export {
  type ManagedNetworkChild,
  type ManagedNetworkProcess,
  type ManagedNetworkSpawnRequest,
  type SpawnWithManagedNetworkOptions,
  spawnWithManagedNetwork,
} from './spawn-with-managed-network.ts';
