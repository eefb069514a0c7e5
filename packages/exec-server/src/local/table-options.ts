import type { NetworkResolver, StartBridgeOptions } from '@execd/network-proxy';
import { type Logger, NOOP_LOGGER } from '@execd/protocol';
import type { EventLogLimits } from '@execd/protocol/contract';
import type { BaseEnv, ForkServer } from '@execd/pty-utils';
import type { CommandLimits, PreparedSandboxes, SandboxRootPins } from '@execd/sandboxing';
import { defaultSandboxDenied, defaultSpawner } from './default-spawner.ts';
import * as limits from './limits.ts';
import type { NetworkPolicyRequester } from './process-network.ts';
import type { RetentionLimits } from './retained-output.ts';
import type { ShellSnapshotPreparer } from './shell-snapshots.ts';
import type { SandboxDenialCheck, Spawner } from './spawner.ts';

/** Options of a LocalProcessTable; every limit defaults to the original's value (spec §3.1). */
export interface LocalProcessTableOptions {
  /** Launches children (default: `@execd/sandboxing`'s `spawnProcess`, i.e. wrap + pty-utils). */
  readonly spawner?: Spawner | undefined;
  /** Sandbox denial detection for `sandboxDenied` (only consulted for sandboxed children). */
  readonly isSandboxDenied?: SandboxDenialCheck | undefined;
  /**
   * Restores shell snapshots (`ExecParams.shellSnapshot`). Default: a cache owned by this table
   * (closed at shutdown); a server passes one cache shared by all its sessions. `null`: never
   * restore (commands run unchanged, as after a failed capture).
   */
  readonly shellSnapshots?: ShellSnapshotPreparer | null | undefined;
  /** The executor environment `envPolicy` applies to (default `process.env`). */
  readonly executorEnv?: BaseEnv | undefined;
  /**
   * The credential patterns an `envPolicy` drops unless it sets `ignoreDefaultExcludes`, for the
   * child's environment and a captured shell snapshot's alike (default `DEFAULT_EXCLUDE_PATTERNS`).
   * Replaces the list: extend it with `[...DEFAULT_EXCLUDE_PATTERNS, 'MORE_*']`.
   */
  readonly defaultEnvExcludes?: readonly string[] | undefined;
  /**
   * Answers the `network/policyRequest`s of `proxied` processes with callbacks on (a server
   * routes them to the session's client; in-process, e.g. an approval prompt). Undefined: such
   * questions are denied (`deciderFailed`, not cached).
   */
  readonly networkPolicyRequester?: NetworkPolicyRequester | undefined;
  /** Name resolution of the `proxied` processes' proxies (default `getaddrinfo`; tests map names). */
  readonly networkResolver?: NetworkResolver | undefined;
  /** Bridge settings of `proxied` processes (ports inside the sandbox, user namespace, timeouts). */
  readonly networkBridge?: Omit<StartBridgeOptions, 'proxy'> | undefined;
  /**
   * Executor secrets masked in every sandbox of this table (a server passes its auth token file):
   * a sandboxed command reads them as empty.
   */
  readonly sandboxHiddenPaths?: readonly string[] | undefined;
  /**
   * Resource limits of each sandboxed child (default sandboxing's `DEFAULT_COMMAND_LIMITS`;
   * `false`: none). A hit limit is reported as a last `execd: …` line of the child's output.
   */
  readonly commandLimits?: CommandLimits | false | undefined;
  /**
   * Sandboxes started ahead of their commands, shared by every table of a server (sandboxing's
   * `PreparedSandboxes`, created with `onStarted: guardSpawned`); owned and closed by whoever
   * made it. Undefined: every sandbox starts cold.
   */
  readonly preparedSandboxes?: PreparedSandboxes | undefined;
  /**
   * Starts commands on pipes from a small helper process instead of forking the server (see
   * pty-utils' `ForkServer`); owned and closed by whoever made it. Undefined: the server forks.
   */
  readonly forkServer?: ForkServer | undefined;
  /**
   * The pins of the sandboxes' writable roots (default: one set per table, i.e. per session,
   * pinned at first use). An environment passes its own, pinned when it was created.
   */
  readonly sandboxRootPins?: SandboxRootPins | undefined;
  /** How long a closed process stays readable (default 30 s; tests use a few ms). */
  readonly exitedRetentionMs?: number | undefined;
  readonly retainedOutputMaxBytes?: number | undefined;
  readonly retainedOutputMaxChunks?: number | undefined;
  readonly eventHistoryMaxEvents?: number | undefined;
  readonly eventHistoryMaxBytes?: number | undefined;
  readonly writeIdsPerProcess?: number | undefined;
  readonly exitGraceMs?: number | undefined;
  readonly drainTimeoutMs?: number | undefined;
  readonly shutdownDrainTimeoutMs?: number | undefined;
  readonly logger?: Logger | undefined;
}

/** LocalProcessTableOptions with every default applied. */
export interface TableConfig {
  readonly spawner: Spawner;
  readonly isSandboxDenied: SandboxDenialCheck;
  readonly shellSnapshots: ShellSnapshotPreparer | null | undefined;
  readonly executorEnv: BaseEnv;
  readonly defaultEnvExcludes: readonly string[] | undefined;
  readonly networkPolicyRequester: NetworkPolicyRequester | undefined;
  readonly networkResolver: NetworkResolver | undefined;
  readonly networkBridge: Omit<StartBridgeOptions, 'proxy'> | undefined;
  readonly sandboxHiddenPaths: readonly string[];
  readonly commandLimits: CommandLimits | false | undefined;
  readonly preparedSandboxes: PreparedSandboxes | undefined;
  readonly forkServer: ForkServer | undefined;
  readonly sandboxRootPins: SandboxRootPins | undefined;
  readonly exitedRetentionMs: number;
  readonly retention: RetentionLimits;
  readonly history: EventLogLimits;
  readonly writeIdsPerProcess: number;
  readonly exitGraceMs: number;
  readonly drainTimeoutMs: number;
  readonly shutdownDrainTimeoutMs: number;
  readonly logger: Logger;
}

/** Applies the defaults (the original's values, spec §3.1) to `options`. */
export function resolveTableOptions(options: LocalProcessTableOptions): TableConfig {
  return {
    spawner: options.spawner ?? defaultSpawner,
    isSandboxDenied: options.isSandboxDenied ?? defaultSandboxDenied,
    shellSnapshots: options.shellSnapshots,
    executorEnv: options.executorEnv ?? process.env,
    defaultEnvExcludes: options.defaultEnvExcludes,
    networkPolicyRequester: options.networkPolicyRequester,
    networkResolver: options.networkResolver,
    networkBridge: options.networkBridge,
    sandboxHiddenPaths: options.sandboxHiddenPaths ?? [],
    commandLimits: options.commandLimits,
    preparedSandboxes: options.preparedSandboxes,
    forkServer: options.forkServer,
    sandboxRootPins: options.sandboxRootPins,
    exitedRetentionMs: options.exitedRetentionMs ?? limits.EXITED_PROCESS_RETENTION_MS,
    retention: {
      maxBytes: options.retainedOutputMaxBytes ?? limits.RETAINED_OUTPUT_MAX_BYTES,
      maxChunks: options.retainedOutputMaxChunks ?? limits.RETAINED_OUTPUT_MAX_CHUNKS,
    },
    history: {
      maxEvents: options.eventHistoryMaxEvents ?? limits.EVENT_HISTORY_MAX_EVENTS,
      maxBytes: options.eventHistoryMaxBytes ?? limits.EVENT_HISTORY_MAX_BYTES,
    },
    writeIdsPerProcess: options.writeIdsPerProcess ?? limits.RETAINED_WRITE_IDS_PER_PROCESS,
    exitGraceMs: options.exitGraceMs ?? limits.EXIT_OUTPUT_GRACE_MS,
    drainTimeoutMs: options.drainTimeoutMs ?? limits.STREAM_DRAIN_TIMEOUT_MS,
    shutdownDrainTimeoutMs: options.shutdownDrainTimeoutMs ?? limits.SHUTDOWN_DRAIN_TIMEOUT_MS,
    logger: options.logger ?? NOOP_LOGGER,
  };
}
