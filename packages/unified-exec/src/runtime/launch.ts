import { randomUUID } from 'node:crypto';
import type { ExecProcess, Logger } from '@execd/exec-server';
import {
  ExecError,
  type ExecParams,
  pathToFileUri,
  type SandboxContext,
  type ShellSnapshotRequest,
} from '@execd/protocol';
import { sandboxFromContext, spawnProcess } from '@execd/sandboxing';
import type { ExecEnvironment } from '../environment/exec-environment.ts';
import { UnifiedExecError } from '../errors.ts';
import type { SandboxAttempt } from '../orchestrator/tool-orchestrator.ts';
import { ExecServerDriver } from '../process/exec-server-driver.ts';
import { LocalSpawnDriver } from '../process/local-spawn-driver.ts';
import { UnifiedExecProcess } from '../process/unified-exec-process.ts';
import type { CommandEnv } from './command-env.ts';

/** Everything needed to start one attempt of a command. */
export interface LaunchRequest {
  /** The unified (model-facing) process id. */
  readonly processId: number;
  /** argv, shell included; never empty. */
  readonly command: readonly string[];
  /** Absolute working directory on the executor. */
  readonly cwd: string;
  readonly tty: boolean;
  readonly env: CommandEnv;
  /** Set when the executor should restore a shell snapshot (forces the exec-server path). */
  readonly shellSnapshot: ShellSnapshotRequest | undefined;
  readonly environment: ExecEnvironment;
  readonly earlyExitGraceMs: number;
  readonly logger?: Logger | undefined;
}

/** The portable sandbox intent of a sandboxed attempt in `environment`. */
export function sandboxContextFor(environment: ExecEnvironment): SandboxContext {
  return {
    profile: environment.permissionProfile,
    workspaceRoots: environment.workspaceRoots?.map((root) => pathToFileUri(root)),
    networkAccess: environment.networkAccess,
    writableRoots: undefined,
    network: undefined,
    excludeTmpdirEnvVar: undefined,
    excludeSlashTmp: undefined,
    mode: 'auto',
  };
}

/**
 * The exec-server process id of an attempt: the unified id, with a fresh UUID suffix when a
 * sandbox, a shell snapshot or a retry is involved (the executor may still hold an earlier launch
 * under the plain id); the model only ever sees the unified id.
 */
export function execServerProcessId(processId: number, suffixed: boolean): string {
  return suffixed ? `${processId}-${randomUUID()}` : String(processId);
}

/** `process {id} already exists` (-32600) from `process/start`. */
function isDuplicateProcessId(error: unknown): boolean {
  return ExecError.is(error) && error.code === 'invalidRequest' && /already exists/.test(error.message);
}

/** The `process/start` params of an attempt (spec §4.3 step 1). */
export function execServerParams(
  request: LaunchRequest,
  sandbox: SandboxContext | undefined,
  retry: boolean,
): ExecParams {
  const env = { ...request.env.execServerOverlay };
  // The snapshot restores the login shell's PATH; an overlay PATH would override it.
  if (request.shellSnapshot !== undefined) delete env.PATH;
  return {
    processId: execServerProcessId(
      request.processId,
      sandbox !== undefined || request.shellSnapshot !== undefined || retry,
    ),
    argv: [...request.command],
    cwd: pathToFileUri(request.cwd),
    envPolicy: request.env.execServerPolicy,
    shellSnapshot: request.shellSnapshot,
    env,
    tty: request.tty,
    pipeStdin: false,
    arg0: undefined,
    sandbox,
    enforceManagedNetwork: false,
    managedNetwork: undefined,
    networkProxy: undefined,
  };
}

/**
 * Starts one attempt (the original's `open_session_with_exec_env`): a remote environment, or a
 * local one that needs a shell snapshot, goes through the environment's exec-server backend;
 * otherwise the command is spawned here (`spawnProcess`: PTY for tty, pipes with stdin closed
 * otherwise). Spawn failures are `createProcess` errors; an early sandbox denial is
 * `sandboxDenied`.
 */
export async function launchAttempt(
  request: LaunchRequest,
  attempt: SandboxAttempt,
): Promise<UnifiedExecProcess> {
  if (request.command.length === 0) throw UnifiedExecError.missingCommandLine();
  const { environment } = request;
  const sandbox = attempt.sandboxed ? sandboxContextFor(environment) : undefined;
  const options = { tty: request.tty, earlyExitGraceMs: request.earlyExitGraceMs, logger: request.logger };
  if (environment.isRemote || request.shellSnapshot !== undefined) {
    let started: ExecProcess;
    try {
      const backend = await environment.execBackend();
      const params = execServerParams(request, sandbox, attempt.retry);
      try {
        started = await backend.start(params);
      } catch (error) {
        // The executor still retains a finished process under the plain id (ids are reused):
        // start under a fresh suffixed id instead, as the original does for sandboxed launches.
        if (!isDuplicateProcessId(error) || params.processId !== String(request.processId)) throw error;
        started = await backend.start({ ...params, processId: execServerProcessId(request.processId, true) });
      }
    } catch (error) {
      throw UnifiedExecError.createProcess(error instanceof Error ? error.message : String(error), error);
    }
    request.logger?.debug('unified-exec: started on exec-server', {
      processId: request.processId,
      backendProcessId: started.processId,
      sandboxType: started.sandboxType,
    });
    return UnifiedExecProcess.start(new ExecServerDriver(started), options);
  }
  let spawned: Awaited<ReturnType<typeof spawnProcess>>;
  try {
    spawned = await spawnProcess({
      command: request.command,
      cwd: request.cwd,
      env: request.env.env,
      sandbox: sandboxFromContext(sandbox, request.cwd),
      tty: request.tty,
      stdinOpen: request.tty,
      logger: request.logger,
    });
  } catch (error) {
    throw UnifiedExecError.createProcess(error instanceof Error ? error.message : String(error), error);
  }
  request.logger?.debug('unified-exec: spawned', {
    processId: request.processId,
    sandboxType: spawned.sandboxType,
  });
  return UnifiedExecProcess.start(new LocalSpawnDriver(spawned), options);
}
