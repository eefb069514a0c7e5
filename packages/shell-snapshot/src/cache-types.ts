import type { ExecEnvPolicy, Logger, RpcError, ShellSnapshotRequest } from '@execd/protocol';
import type { CaptureFailureReason, CaptureRunner } from './capture-runner.ts';
import type { LaunchCommand } from './restore.ts';
import type { CreateEnv } from './snapshot-env.ts';

/** Options of a `ShellSnapshotCache`; every one has a default. */
export interface ShellSnapshotCacheOptions {
  /**
   * The credential patterns the env policy drops from captured environments (default
   * `DEFAULT_EXCLUDE_PATTERNS`): the same list as the children's, so both lose the same names.
   */
  readonly defaultExcludes?: readonly string[] | undefined;
  /**
   * Replaces the env-policy implementation applied to captured environments (default:
   * `@execd/pty-utils` `createEnv` with `defaultExcludes`). Kept for the integration tests.
   */
  readonly createEnv?: CreateEnv | undefined;
  /** Default capture runner (default: `runCaptureCommand`); a launch may bring its own. */
  readonly runCapture?: CaptureRunner | undefined;
  /** Capture timeout (default 10 s). */
  readonly timeoutMs?: number | undefined;
  /** Capture stdout cap (default 512 KiB). */
  readonly maxOutputBytes?: number | undefined;
  /** Snapshots kept, least recently used evicted first (default 16). */
  readonly maxEntries?: number | undefined;
  /** Wait after a first failed capture before trying again (default 1 s; doubles per failure). */
  readonly retryBackoffMs?: number | undefined;
  /** Cap on that wait (default 5 min). */
  readonly maxRetryBackoffMs?: number | undefined;
  /** Clock for the backoff, in ms (default `performance.now`). */
  readonly now?: (() => number) | undefined;
  /** Key snapshots by the startup files' mtime and size (default true). */
  readonly trackStartupFiles?: boolean | undefined;
  readonly logger?: Logger | undefined;
}

/** One launch that may use a snapshot: `process/start`'s fields after env and sandbox preparation. */
export interface SnapshotLaunchInput {
  /** `ExecParams.shellSnapshot`; undefined = no snapshot asked for. */
  readonly request: ShellSnapshotRequest | undefined;
  /** `ExecParams.argv`, as requested: `[shell.path, "-lc", script, …]` to qualify. */
  readonly argv: readonly string[];
  /** `ExecParams.env`, the request overlay: these names win over the snapshot's values. */
  readonly env: Readonly<Record<string, string>>;
  /** `ExecParams.envPolicy` (part of the key; applied to the captured environment). */
  readonly envPolicy?: ExecEnvPolicy | undefined;
  /** `ExecParams.sandbox` or any JSON value describing it (part of the key only). */
  readonly sandbox?: unknown;
  /** The prepared launch (computed env, native cwd, maybe wrapped argv ending with `argv`). */
  readonly command: LaunchCommand;
  /** Captures for this launch's key, e.g. inside the launch's sandbox (default: the cache's). */
  readonly runCapture?: CaptureRunner | undefined;
  /** Stop waiting for a capture (the capture itself goes on for other launches). */
  readonly cancelSignal?: AbortSignal | undefined;
}

/**
 * What to launch: `command` is always ready to spawn.
 * - `notRequested` / `skipped`: unchanged (no request; argv not `[shell.path, "-lc", …]`);
 * - `restored`: rewritten to restore the snapshot;
 * - `fallback`: unchanged, because there is no snapshot for this key (yet): `failure` says why;
 * - `invalid`: do not launch; reject `process/start` with `error` (-32602).
 */
export type SnapshotPrepareResult =
  | { readonly status: 'notRequested' | 'skipped' | 'restored'; readonly command: LaunchCommand }
  | {
      readonly status: 'fallback';
      readonly command: LaunchCommand;
      readonly failure: { readonly reason: CaptureFailureReason; readonly detail: string };
    }
  | { readonly status: 'invalid'; readonly error: RpcError };
