import { ExecError, RpcError, type SandboxParam } from '@execd/protocol';
import {
  describeSandboxDenial,
  prepareSandboxCommand,
  sandboxFromContext,
  spawnProcess,
} from '@execd/sandboxing';
import { type CaptureRunner, runCaptureCommand } from '@execd/shell-snapshot';
import { guardSpawned } from './orphan-guard.ts';
import type { LocalSpawnRequest, LocalSpawnResult, SandboxDenialCheck } from './spawner.ts';

/**
 * A sandbox that cannot run on this host (no bubblewrap, wrong platform, unsupported option)
 * is the request's problem, not the server's: -32602 with the reason; so is a sandbox the
 * request describes wrongly or whose writable root changed under it (`invalidParams`).
 * Anything else passes.
 */
function rejectUnsupported(error: unknown): never {
  if (ExecError.is(error) && error.code === 'unsupported') {
    throw new RpcError(
      'invalidParams',
      `sandbox is not available on this exec-server host: ${error.message}`,
      {
        cause: error,
      },
    );
  }
  if (ExecError.is(error) && error.code === 'invalidParams' && !(error instanceof RpcError)) {
    throw new RpcError('invalidParams', error.message, { cause: error });
  }
  throw error;
}

/**
 * Launches a child with `@execd/sandboxing` (the original's `spawn_process`): the request's
 * sandbox context is resolved against its cwd and selected (`mode`, default `auto`), the command
 * is wrapped (bubblewrap on Linux, Seatbelt on macOS) and spawned by `@execd/pty-utils`, in a PTY
 * for `tty`, else on pipes. No context: unsandboxed, `sandboxType: "none"`. A `proxied` process
 * runs inside its proxy's bridge (its own network namespace). The child's process group is
 * guarded against outliving this process (see `orphan-guard.ts`).
 */
export async function defaultSpawner(request: LocalSpawnRequest): Promise<LocalSpawnResult> {
  try {
    const sandbox = sandboxFromContext(request.sandbox, request.cwd);
    const launched = await spawnProcess({
      command: request.argv,
      cwd: request.cwd,
      env: request.env,
      arg0: request.arg0,
      sandbox,
      tty: request.tty,
      stdinOpen: request.stdin === 'pipe',
      drainTimeoutMs: request.drainTimeoutMs,
      managedNetwork: request.managedNetwork,
      rootPins: request.rootPins,
      hiddenPaths: request.hiddenPaths,
      ...(request.limits === undefined ? {} : { limits: request.limits }),
      preparedSandboxes: request.preparedSandboxes,
      forkServer: request.forkServer,
    });
    // The child's group must not outlive this process if it is killed without cleaning up (a
    // prepared sandbox's was guarded when it started: see the pool's `onStarted`).
    return launched.prepared ? launched : guardSpawned(launched);
  } catch (error) {
    rejectUnsupported(error);
  }
}

/**
 * A shell-snapshot capture runner that runs the capture inside the same sandbox as the launch
 * (spec §6.2: the profile is sourced under the command's own confinement).
 */
export function sandboxedCaptureRunner(context: SandboxParam): CaptureRunner {
  return async (command, limits) => {
    let wrapped: Awaited<ReturnType<typeof prepareSandboxCommand>>;
    try {
      wrapped = await prepareSandboxCommand({
        command: command.argv,
        cwd: command.cwd,
        env: command.env,
        arg0: command.arg0,
        sandbox: sandboxFromContext(context, command.cwd),
        tty: false,
      });
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      return { ok: false, reason: 'runnerFailed', detail };
    }
    try {
      return await runCaptureCommand(
        { argv: wrapped.argv, cwd: command.cwd, env: wrapped.env, arg0: wrapped.arg0 },
        limits,
      );
    } finally {
      await wrapped.release();
    }
  };
}

/**
 * Denial detection: the original's `is_likely_sandbox_denied` (spec §5.5), widened by
 * `describeSandboxDenial` to refusals its keywords miss (a failed connection under a network-off
 * sandbox, EBUSY/EXDEV on protected mounts, a blocked nested user namespace).
 */
export const defaultSandboxDenied: SandboxDenialCheck = (sandboxType, output) =>
  describeSandboxDenial(sandboxType, output).denied;
