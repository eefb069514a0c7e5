// @execd/protocol/contract: what both sides implement, an in-process backend (exec-server) and a
// remote one (exec-client): ExecBackend, ExecProcess and their events, the bounded EventLog behind
// `events()`, and the managed network's decider and denial types. No Node APIs.

export { EventLog, type EventLogLimits, type SequencedEvent } from './event-log.ts';
export type { ExecBackend, StartOptions } from './exec-backend.ts';
export type { EventsOptions, ExecProcess, ExecProcessEvent, ExecReadOptions } from './exec-process.ts';
export type {
  NetworkDenial,
  NetworkDenialReason,
  NetworkProtocol,
  NetworkRequestInfo,
} from './network-denial.ts';
export { type NetworkPolicyAnswer, type NetworkPolicyDecider, toNetworkDecision } from './network-policy.ts';
