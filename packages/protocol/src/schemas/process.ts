import * as v from 'valibot';
import {
  Bytes,
  Int32,
  opt,
  orNull,
  PathUri,
  ProcessId,
  Seq,
  ShellInfo,
  UInt,
  withDefault,
} from './common.ts';
import { ManagedNetwork, NetworkProxyLaunchConfig } from './network.ts';
import { SandboxParam, SandboxType } from './sandbox.ts';

/** Which base environment a child inherits from the executor (spec §7). */
export const ExecEnvPolicy = v.object({
  /** `all` (every executor variable), `core` (PATH, HOME, … only) or `none`. */
  inherit: v.picklist(['core', 'all', 'none']),
  /**
   * When false, names matching the executor's default excludes are removed: by default `*KEY*`,
   * `*SECRET*`, `*TOKEN*` (the original's) and execd's `*PASSWORD*`, `*PASSWD*`, `*CREDENTIAL*`,
   * `*AUTH*`, `*COOKIE*`, `*SESSION*`, `*_PAT`, `*DSN*`, `DATABASE_URL`, keeping a few non-secret
   * names they catch (git identity, `SSH_AUTH_SOCK`, session plumbing); an executor may configure
   * its own list.
   */
  ignoreDefaultExcludes: v.boolean(),
  /** Case-insensitive `*`/`?` patterns of names to remove. */
  exclude: v.array(v.string()),
  /** Variables to set after exclusion. */
  set: v.record(v.string(), v.string()),
  /** When non-empty, only names matching one of these patterns are kept. */
  includeOnly: v.array(v.string()),
});
export type ExecEnvPolicy = v.InferOutput<typeof ExecEnvPolicy>;

/** Ask the executor to capture the login shell once and restore it for this command. */
export const ShellSnapshotRequest = v.object({
  /** Cache scope (1..256 bytes), e.g. `{threadId}:{environmentId}`. */
  scopeId: v.string(),
  shell: ShellInfo,
});
export type ShellSnapshotRequest = v.InferOutput<typeof ShellSnapshotRequest>;

/** `process/start` params. */
export const ExecParams = v.object({
  /** Client-chosen key, unique within the session; not an OS pid. */
  processId: ProcessId,
  /** Program and arguments; must be non-empty. */
  argv: v.array(v.string()),
  /** Working directory as a `file:///abs/path` URI. */
  cwd: PathUri,
  /** Base environment policy; absent = `env` is used verbatim. */
  envPolicy: opt(ExecEnvPolicy),
  /** Restore a captured login-shell snapshot (argv must be `[shell.path, "-lc", script]`). */
  shellSnapshot: opt(ShellSnapshotRequest),
  /** Variables for the child (overlaid on the policy's environment). Required, may be `{}`. */
  env: v.record(v.string(), v.string()),
  /** Run in a PTY (output stream `pty`, stdin always writable). */
  tty: v.boolean(),
  /** Keep a non-tty child's stdin open for `process/write` (default: stdin is `/dev/null`). */
  pipeStdin: withDefault(v.boolean(), false),
  /** Override `argv[0]` as the child sees it. */
  arg0: opt(v.string()),
  /**
   * Sandbox intent, execd's form (`profile`) or the original's (`permissions`); the executor
   * builds the wrapper. Absent = no sandbox.
   */
  sandbox: opt(SandboxParam),
  /** Route the child's network through the managed proxy. */
  enforceManagedNetwork: withDefault(v.boolean(), false),
  managedNetwork: opt(ManagedNetwork),
  networkProxy: opt(NetworkProxyLaunchConfig),
});
export type ExecParams = v.InferOutput<typeof ExecParams>;
export type ExecParamsInput = v.InferInput<typeof ExecParams>;

/** `process/start` result. */
export const ExecResponse = v.object({
  processId: ProcessId,
  /** Sandbox actually applied. Absent only from legacy peers (unknown). */
  sandboxType: opt(SandboxType),
});
export type ExecResponse = v.InferOutput<typeof ExecResponse>;

/** Output stream label: `pty` for tty processes, else `stdout`/`stderr`. */
export const OutputStream = v.picklist(['stdout', 'stderr', 'pty']);
export type OutputStream = v.InferOutput<typeof OutputStream>;

/** `process/read` params (a long-poll). */
export const ReadParams = v.object({
  processId: ProcessId,
  /** Only events with `seq > afterSeq` are returned (default 0). */
  afterSeq: opt(UInt),
  /** Soft budget for chunk bytes; the first chunk is always returned whole. Default unlimited. */
  maxBytes: opt(UInt),
  /** Wait up to this many milliseconds for something new (default 0: answer at once). */
  waitMs: opt(UInt),
});
export type ReadParams = v.InferOutput<typeof ReadParams>;

/** One retained output chunk (at most 8 KiB from one read of the child's stream). */
export const ProcessOutputChunk = v.object({
  seq: Seq,
  stream: OutputStream,
  chunk: Bytes,
});
export type ProcessOutputChunk = v.InferOutput<typeof ProcessOutputChunk>;

/** `process/read` result. */
export const ReadResponse = v.object({
  chunks: v.array(ProcessOutputChunk),
  /** Pass `nextSeq - 1` as the next `afterSeq`. */
  nextSeq: UInt,
  /** The exit status is known (an `exited` event has been assigned its seq). */
  exited: v.boolean(),
  /** Exit code once exited (`128 + N` when killed by signal N, -1 when unknown); else `null`. */
  exitCode: orNull(Int32),
  /** Exit known and every output stream drained: nothing more will be produced. */
  closed: v.boolean(),
  /** Only ever set by a client that lost its server (synthesised), never by a server. */
  failure: orNull(v.string()),
  /** The executor judged the failure a sandbox denial (only for sandboxed processes). */
  sandboxDenied: withDefault(v.boolean(), false),
  /**
   * execd addition: present when `afterSeq + 1` is older than the oldest retained output chunk,
   * i.e. output between them was evicted. The reader knows it missed data instead of a silent gap.
   */
  firstRetainedSeq: opt(Seq),
  /**
   * execd addition, sent only to a client that opted in at `initialize`: the tty process's
   * terminal waits for input after the last event up to `nextSeq - 1` (its foreground program is
   * blocked reading the terminal and the output has been quiet). Absent: not known to wait.
   */
  waitingForInput: opt(v.boolean()),
});
export type ReadResponse = v.InferOutput<typeof ReadResponse>;

/** `process/write` params. */
export const WriteParams = v.object({
  processId: ProcessId,
  /** Bytes for the child's stdin. */
  chunk: Bytes,
  /** Non-empty idempotency key: a retried write with the same id is not written twice. */
  writeId: v.string(),
});
export type WriteParams = v.InferOutput<typeof WriteParams>;

/** Outcome of a write: an expected value, never an error (`stdinClosed`: non-tty without `pipeStdin`). */
export const WriteStatus = v.picklist(['accepted', 'unknownProcess', 'stdinClosed', 'starting']);
export type WriteStatus = v.InferOutput<typeof WriteStatus>;

/** `process/write` result: an expected outcome, never an error. */
export const WriteResponse = v.object({ status: WriteStatus });
export type WriteResponse = v.InferOutput<typeof WriteResponse>;

/** The only signal of the original protocol: SIGINT to the process group. */
export const ProcessSignal = v.picklist(['interrupt']);

/** `process/signal` params; the result is `{}`. */
export const SignalParams = v.object({ processId: ProcessId, signal: ProcessSignal });
export type SignalParams = v.InferOutput<typeof SignalParams>;

/** `process/terminate` params: kill the process group (SIGKILL). */
export const TerminateParams = v.object({ processId: ProcessId });
export type TerminateParams = v.InferOutput<typeof TerminateParams>;

/** `running: true` when a live process was asked to die; false when it had exited or is unknown. */
export const TerminateResponse = v.object({ running: v.boolean() });
export type TerminateResponse = v.InferOutput<typeof TerminateResponse>;

/** execd addition: `process/resize` params (tty processes only). */
export const ResizeParams = v.object({
  processId: ProcessId,
  cols: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(65535)),
  rows: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(65535)),
});
export type ResizeParams = v.InferOutput<typeof ResizeParams>;

/** execd addition: `process/resize` result; `resized: false` for unknown, exited or non-tty processes. */
export const ResizeResponse = v.object({ resized: v.boolean() });
export type ResizeResponse = v.InferOutput<typeof ResizeResponse>;

/** execd addition: one row of `process/list`. */
export const ProcessListEntry = v.object({
  processId: ProcessId,
  /** OS pid of the child (or of the sandbox wrapper), when running. */
  pid: opt(v.number()),
  argv: v.array(v.string()),
  cwd: PathUri,
  tty: v.boolean(),
  state: v.picklist(['starting', 'running', 'exited', 'closed']),
  exitCode: opt(Int32),
  sandboxType: opt(SandboxType),
  /** Next seq the process will assign. */
  nextSeq: UInt,
  /** Milliseconds since the epoch. */
  startedAtMs: v.number(),
});
export type ProcessListEntry = v.InferOutput<typeof ProcessListEntry>;

/** execd addition: `process/list` params (none). */
export const ProcessListResponse = v.object({ processes: v.array(ProcessListEntry) });
export type ProcessListResponse = v.InferOutput<typeof ProcessListResponse>;

/** `process/output` notification. */
export const ExecOutputDeltaNotification = v.object({
  processId: ProcessId,
  seq: Seq,
  stream: OutputStream,
  chunk: Bytes,
});
export type ExecOutputDeltaNotification = v.InferOutput<typeof ExecOutputDeltaNotification>;

/**
 * execd extension `process/outputBatch`: several consecutive output chunks of one process in one
 * notification, each with its own seq (exactly what the same number of `process/output`
 * notifications would carry). Sent, on either codec, only to a client that asked for it in
 * `initialize` (`outputBatches: true`), when output piled up faster than one frame per chunk.
 */
export const ProcessOutputBatchNotification = v.object({
  processId: ProcessId,
  /** Oldest first; seqs increasing. */
  chunks: v.array(ProcessOutputChunk),
});
export type ProcessOutputBatchNotification = v.InferOutput<typeof ProcessOutputBatchNotification>;

/** `process/exited` notification. */
export const ExecExitedNotification = v.object({
  processId: ProcessId,
  seq: Seq,
  exitCode: Int32,
  /** Absent from legacy servers (the client then reads to learn it). */
  sandboxDenied: opt(v.boolean()),
});
export type ExecExitedNotification = v.InferOutput<typeof ExecExitedNotification>;

/**
 * execd addition: `process/waitingForInput` notification, sent only to a client that opted in at
 * `initialize` (`waitingForInput: true`). The tty process's foreground program is blocked
 * reading the terminal and its output has been quiet since the event `seq` (0: since the start).
 * Unsequenced: it takes no seq of its own; any later output or write ends the wait.
 */
export const ExecWaitingForInputNotification = v.object({ processId: ProcessId, seq: UInt });
export type ExecWaitingForInputNotification = v.InferOutput<typeof ExecWaitingForInputNotification>;

/** `process/closed` notification: exit known and every stream drained; the last event. */
export const ExecClosedNotification = v.object({ processId: ProcessId, seq: Seq });
export type ExecClosedNotification = v.InferOutput<typeof ExecClosedNotification>;
