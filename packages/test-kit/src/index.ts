// @execd/test-kit: what every package's tests share (private, never published). The vitest
// config factory is src/vitest-config.ts (imported by path), the leak check's setup file
// `@execd/test-kit/setup` (src/setup.ts).
export { captureLogger, type LogRecord } from './capture-logger.ts';
export { type BuildCliOptions, type BuiltCli, buildCliFromSource } from './cli-build.ts';
export { type ChildExit, CliChild, type CliChildOptions, type CliRun, runCli } from './cli-child.ts';
export { CODEX_PEER_VERSION, codexPeerDir, installCodexPeer } from './codex-peer-install.ts';
export { type PeerServer, type PeerServerOptions, peerBinary, startPeerServer } from './codex-peer-server.ts';
export { collectGarbage } from './collect-garbage.ts';
export {
  collectEvents,
  execParams,
  outputText,
  type ReadOutcome,
  readUntil,
  SCENARIO_DEADLINE_MS,
  summarise,
} from './exec-process-helpers.ts';
export { defineExecProcessScenarios } from './exec-process-scenarios.ts';
export {
  FaultProxy,
  type FaultProxyOptions,
  type FaultProxyStats,
  type ProxyDirection,
  type ProxyDirections,
} from './fault-proxy.ts';
export {
  expectGone,
  expectNoLeaks,
  expectTrackedGone,
  LEAK_FD_TIMEOUT_MS,
  LEAK_PROCESS_TIMEOUT_MS,
  type LeakBaseline,
  type LeakCheckOptions,
  type TrackedScope,
  takeLeakBaseline,
  trackedSurvivors,
} from './leak-check.ts';
export { type Origin, startOrigin, startTlsOrigin } from './origin.ts';
export { isProcessRunning } from './process-alive.ts';
export { pidsMatching, uniqueMarker } from './process-markers.ts';
export { type ProcessList, ProcessTracker } from './process-tracker.ts';
export {
  allProcesses,
  cmdline,
  descendants,
  fdCount,
  listedFds,
  openFds,
  type ProcStat,
  processesWithEnv,
  procStat,
  rssBytes,
  sessionMembers,
} from './procfs.ts';
export { type ParsedToolText, parseToolText } from './tool-text.ts';
export { listenUnixDaemon, type UnixDaemon } from './unix-daemon.ts';
export {
  type Truthy,
  WAIT_FOR_INTERVAL_MS,
  WAIT_FOR_TIMEOUT_MS,
  type WaitForOptions,
  waitFor,
} from './wait-for.ts';
export { httpHeadEnd, WsFrameSplitter } from './ws-frame-splitter.ts';
