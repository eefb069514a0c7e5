import * as v from 'valibot';
import { opt, PathUri, ShellInfo } from './common.ts';

/**
 * What an environment can do beyond the basic process surface, in the original's wire order.
 * Each flag is `true` only when the server implements the feature; a client must not rely on a
 * feature whose flag is absent or `false`. Unknown flags are ignored.
 */
export const EnvironmentCapabilities = v.object({
  /** `process/start` accepts `networkProxy` (the original's `RemoteNetworkProxyLaunchConfig`). */
  networkProxyLaunch: v.optional(v.boolean(), false),
  /** The managed network proxy can ask the client to review domains (Codex >= 0.169). */
  networkProxyReviewDomains: v.optional(v.boolean()),
  /** Shell startup masks credentials (Codex >= 0.169). */
  credentialMasking: v.optional(v.boolean()),
  /** Credential masking accepts custom providers (Codex >= 0.169). */
  credentialMaskingCustomProviders: v.optional(v.boolean()),
  /** `capabilityRoots/discoverV1` honours a root's `sandbox`. */
  capabilityDiscoverySandbox: v.optional(v.boolean(), false),
  /** The server implements `fs/watchMissing` (Codex >= 0.169). */
  fsWatchMissing: v.optional(v.boolean()),
  /** The server implements `capabilities/loadDiscoveries` (Codex >= 0.169). */
  capabilityDiscoveryV2: v.optional(v.boolean()),
  /** The server implements `environmentConfig/read`. */
  environmentConfigRead: v.optional(v.boolean(), false),
  /** `http/request` headers may name an executor environment variable (`valueEnvVar`). */
  httpHeaderEnvVars: v.optional(v.boolean(), false),
  /** `fs/open`/`fs/readBlock` work under a `sandbox`. */
  sandboxedFileStreaming: v.optional(v.boolean(), false),
  /** The server implements streamed file writes (Codex >= 0.169). */
  fileWriteStreaming: v.optional(v.boolean()),
  /** `process/start` restores a `shellSnapshot`. */
  shellSnapshotV2: v.optional(v.boolean(), false),
  /** Windows MXC sandboxing (Codex >= 0.169). */
  windowsMxc: v.optional(v.boolean()),
  /** A Linux sandbox with a writable root keeps `/dev` usable (Codex >= 0.169). */
  linuxRootWritePreservesDevices: v.optional(v.boolean()),
  /** A Linux sandbox with an approved writable root keeps the other restrictions (Codex >= 0.169). */
  linuxApprovedRootWritePreservesRestrictions: v.optional(v.boolean()),
  /** execd addition: the server implements `process/resize`. */
  processResize: v.optional(v.boolean()),
  /** execd addition: the server implements `process/list`. */
  processList: v.optional(v.boolean()),
  /** execd addition: `ReadResponse.firstRetainedSeq` is reported. */
  retentionGapReporting: v.optional(v.boolean()),
  /** execd addition: tty processes report `process/waitingForInput` (to clients that opt in). */
  waitingForInput: v.optional(v.boolean()),
});
export type EnvironmentCapabilities = v.InferOutput<typeof EnvironmentCapabilities>;

/** `environment/info` result. */
export const EnvironmentInfo = v.object({
  /** The executor's default shell. */
  shell: ShellInfo,
  /** The executor's working directory, as a `file://` URI. */
  cwd: opt(PathUri),
  /** Temporary directories (from `TMPDIR`) as `file://` URIs. */
  temporaryDirectories: opt(v.array(PathUri)),
  /** The first temporary directory. */
  tempDir: opt(PathUri),
  /** The executor user's home directory (sent by Codex CLI >= 0.169). */
  userHomeDir: opt(PathUri),
  /** `linux`, `macos` or `windows` (sent by Codex CLI >= 0.169). */
  platformOs: opt(v.string()),
  /** Version of the server program (sent by Codex CLI >= 0.169; execd sends its own). */
  executorVersion: opt(v.string()),
  /**
   * Stable identity of the executor implementation, `sha256:<hex>` (sent by Codex CLI >= 0.169).
   * Clients compare it across connections; it changes only with the server program.
   */
  providerId: opt(v.string()),
  /**
   * Folders (`file://` URIs) the server puts in front of `PATH` for the commands it runs (the
   * original's bundled helpers); execd prepends none and sends `[]`.
   */
  prependPathDirs: opt(v.array(PathUri)),
  capabilities: v.optional(EnvironmentCapabilities, {}),
  /**
   * execd addition: the resource limits sandboxed commands run under on this executor. Absent
   * from original peers (and from execd on platforms without sandbox limits).
   */
  resourceLimits: opt(
    v.object({
      /** The cgroup hierarchy that enforces them, or `none` (only the file-size limit applies). */
      kind: v.picklist(['cgroup2', 'cgroup1', 'none']),
      /** What the hierarchy can limit: `pids`, `memory`, `cpu` (CPU-time accounting). */
      controllers: v.array(v.string()),
      /** One line for people: the limits in force, e.g. `cgroup1 (pids, memory, cpu): at most 1024 …`. */
      summary: v.string(),
      /** Why a limit is missing (always set for `none`). */
      reason: opt(v.string()),
    }),
  ),
  /**
   * execd addition: how every process of a command's tree is found, so that ending the command
   * (terminate, close, disconnect) ends them all. `cgroup2`/`cgroup1`: a cgroup per command,
   * `setsid` daemons included; `marker`: no cgroup, an environment marker every process of an
   * unsandboxed command inherits, found by a /proc scan (a sandboxed command's pid namespace);
   * `session`: process group and session (not Linux). Absent from original peers.
   */
  containment: opt(
    v.object({
      kind: v.picklist(['cgroup2', 'cgroup1', 'marker', 'session']),
      /** One line for people. */
      summary: v.string(),
    }),
  ),
});
export type EnvironmentInfo = v.InferOutput<typeof EnvironmentInfo>;

/** `environment/status` result. */
export const EnvironmentStatus = v.object({
  /** Always `ready` from a live server. */
  status: v.string(),
});
export type EnvironmentStatus = v.InferOutput<typeof EnvironmentStatus>;
