/** A resource a command cgroup can limit. `cpu` is CPU-time accounting (for `maxCpuSeconds`). */
export type ResourceController = 'pids' | 'memory' | 'cpu';

/** The cgroup hierarchy in use, or `none` when limits cannot be enforced here. */
export type ResourceControlKind = 'cgroup2' | 'cgroup1' | 'none';

/**
 * What this executor can enforce, found once at start by `detectResourceControl`. Plain data
 * (JSON-safe) so that it can be reported as is in environment info.
 */
export type ResourceControl =
  | {
      readonly kind: 'cgroup2';
      /** What can be limited; `cpu` is always there (`cpu.stat` exists in every v2 cgroup). */
      readonly controllers: readonly ResourceController[];
      /** The `execd` group whose children are command groups, e.g. `/sys/fs/cgroup/<own>/execd`. */
      readonly parent: string;
      /** Set when some controller is missing: which one, and why. */
      readonly reason?: string;
    }
  | {
      readonly kind: 'cgroup1';
      readonly controllers: readonly ResourceController[];
      /** The `execd` group per controller, e.g. `{pids: '/sys/fs/cgroup/pids/execd'}`. */
      readonly parent: Readonly<Partial<Record<ResourceController, string>>>;
      readonly reason?: string;
    }
  | {
      readonly kind: 'none';
      /** Always empty. */
      readonly controllers: readonly ResourceController[];
      readonly parent: undefined;
      /** Why no limit can be enforced (always set: limits are never dropped silently). */
      readonly reason: string;
    };

/**
 * Per-command resource limits. An absent (or `undefined`) field is not limited; start from
 * `DEFAULT_COMMAND_LIMITS` and override: `{...DEFAULT_COMMAND_LIMITS, maxMemoryBytes: 2 ** 31}`.
 */
export interface CommandLimits {
  /** Tasks (processes **and threads**) alive at once in the command, bubblewrap's 2-3 included. */
  readonly maxProcesses?: number | undefined;
  /** Memory of the whole command (anonymous + page cache + kernel), swap excluded (none allowed). */
  readonly maxMemoryBytes?: number | undefined;
  /** CPU time of the whole command, all its processes summed, enforced by polling. */
  readonly maxCpuSeconds?: number | undefined;
  /** Largest size of any one file the command writes (RLIMIT_FSIZE, set by the launcher). */
  readonly maxFileBytes?: number | undefined;
}

/** What a command cgroup saw, read after (or during) the command. */
export interface LimitEvents {
  /** Usage reached the memory limit at least once (the kernel then reclaims, page cache included). */
  readonly memoryLimitHit: boolean;
  /** Processes of the command killed by the kernel's OOM killer because of the limit. */
  readonly oomKills: number;
  /** A fork or clone failed because the process limit was reached. */
  readonly pidsLimitHit: boolean;
  /** The CPU-time limit was used up and the command was killed (present when one is set). */
  readonly cpuLimitHit?: boolean;
}
