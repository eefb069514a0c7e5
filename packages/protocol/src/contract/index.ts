// @execd/protocol/contract: what both sides implement, an in-process backend (exec-server) and a
// remote one (exec-client): ExecBackend, ExecProcess and their events, the bounded EventLog behind
// `events()`, and the managed network's decider and denial types. No Node APIs.

export { EventLog, type EventLogLimits, type SequencedEvent } from './event-log.ts';
export type { ExecBackend, StartOptions } from './exec-backend.ts';
export {
  type DirectoryEntry,
  type ExecFileHandle,
  type ExecFileSystem,
  type FileMetadata,
  type FollowOption,
  FS_BLOCK_MAX_BYTES,
  type FsCallOptions,
  type MissingWatch,
  type MissingWatchEnd,
  readFileChunks,
  type WalkOptions,
  type WalkOutcome,
} from './exec-file-system.ts';
export type { EventsOptions, ExecProcess, ExecProcessEvent, ExecReadOptions } from './exec-process.ts';
export type {
  NetworkDenial,
  NetworkDenialReason,
  NetworkProtocol,
  NetworkRequestInfo,
} from './network-denial.ts';
export { type NetworkPolicyAnswer, type NetworkPolicyDecider, toNetworkDecision } from './network-policy.ts';
