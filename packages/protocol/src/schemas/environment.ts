import * as v from 'valibot';
import { opt, PathUri, ShellInfo } from './common.ts';

/** What an environment can do beyond the basic process surface. Unknown flags are ignored. */
export const EnvironmentCapabilities = v.object({
  networkProxyLaunch: v.optional(v.boolean(), false),
  capabilityDiscoverySandbox: v.optional(v.boolean(), false),
  environmentConfigRead: v.optional(v.boolean(), false),
  httpHeaderEnvVars: v.optional(v.boolean(), false),
  sandboxedFileStreaming: v.optional(v.boolean(), false),
  shellSnapshotV2: v.optional(v.boolean(), false),
  /** execd addition: the server implements `process/resize`. */
  processResize: v.optional(v.boolean()),
  /** execd addition: the server implements `process/list`. */
  processList: v.optional(v.boolean()),
  /** execd addition: `ReadResponse.firstRetainedSeq` is reported. */
  retentionGapReporting: v.optional(v.boolean()),
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
});
export type EnvironmentInfo = v.InferOutput<typeof EnvironmentInfo>;

/** `environment/status` result. */
export const EnvironmentStatus = v.object({
  /** Always `ready` from a live server. */
  status: v.string(),
});
export type EnvironmentStatus = v.InferOutput<typeof EnvironmentStatus>;
