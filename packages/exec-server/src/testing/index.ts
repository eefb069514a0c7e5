// @execd/exec-server/testing: test tooling for code built on the exec-server (not for production).

export {
  FaultProxy,
  type FaultProxyOptions,
  type FaultProxyStats,
  type ProxyDirection,
  type ProxyDirections,
} from './fault-proxy.ts';
export { httpHeadEnd, WsFrameSplitter } from './ws-frame-splitter.ts';
