import type { ExecParams, Logger } from '@execd/protocol';
import {
  ShellSnapshotCache,
  type SnapshotLaunchInput,
  type SnapshotPrepareResult,
} from '@execd/shell-snapshot';
import { sandboxedCaptureRunner } from './default-spawner.ts';

/** Prepares launches that ask for a shell snapshot (a `ShellSnapshotCache`, or a test double). */
export interface ShellSnapshotPreparer {
  prepare(input: SnapshotLaunchInput): Promise<SnapshotPrepareResult>;
}

/** The launch `process/start` is about to spawn. */
export interface PreparedLaunch {
  readonly argv: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  readonly arg0: string | undefined;
}

/**
 * A snapshot cache with the table's default excludes, so a captured environment loses the same
 * names a child's does.
 */
export function createShellSnapshotCache(
  logger: Logger,
  defaultExcludes?: readonly string[] | undefined,
): ShellSnapshotCache {
  return new ShellSnapshotCache({ defaultExcludes, logger });
}

/**
 * Start step 4 (spec §2.4, §6.2): when `params.shellSnapshot` is set and qualifies, rewrites the
 * launch to restore the captured shell; an unusable request throws its -32602 RpcError; a failed
 * or skipped capture runs the launch unchanged.
 */
export async function applyShellSnapshot(
  preparer: ShellSnapshotPreparer,
  params: ExecParams,
  launch: PreparedLaunch,
  options: { readonly cancelSignal: AbortSignal; readonly logger: Logger },
): Promise<PreparedLaunch> {
  const result = await preparer.prepare({
    request: params.shellSnapshot,
    argv: params.argv,
    env: params.env,
    envPolicy: params.envPolicy,
    sandbox: params.sandbox,
    command: launch,
    ...(params.sandbox === undefined ? {} : { runCapture: sandboxedCaptureRunner(params.sandbox) }),
    cancelSignal: options.cancelSignal,
  });
  if (result.status === 'invalid') throw result.error;
  if (result.status === 'fallback') {
    options.logger.debug('shell snapshot unavailable; running the command unchanged', {
      processId: params.processId,
      reason: result.failure.reason,
      detail: result.failure.detail,
    });
  }
  const { command } = result;
  return { argv: command.argv, cwd: command.cwd, env: command.env, arg0: command.arg0 };
}
