import { randomUUID } from 'node:crypto';
import {
  ExecError,
  type ExecParams,
  type Logger,
  pathToFileUri,
  type SandboxContext,
  type ShellSnapshotRequest,
} from '@execd/protocol';
import type { ExecProcess, NetworkPolicyDecider } from '@execd/protocol/contract';
import { sandboxFromContext, spawnProcess } from '@execd/sandboxing';
import type { Environment } from '../environment/environment.ts';
import { UnifiedExecError } from '../errors.ts';
import type { NetworkApprovalTarget } from '../orchestrator/approval.ts';
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
  readonly environment: Environment;
  readonly earlyExitGraceMs: number;
  /** Decides the managed network's questions about hosts no pattern covers (true allows). */
  readonly approveNetwork?: ((target: NetworkApprovalTarget) => Promise<boolean>) | undefined;
  readonly logger?: Logger | undefined;
}

/**
 * The roots a sandboxed command in `environment` may write under `workspace-write`: the
 * environment's configured `workspaceRoots`, else its own cwd. Never the command's cwd: the
 * model chooses that (`workdir`), and a command may run in a folder it cannot write.
 */
export function writableWorkspaceRoots(environment: Environment): readonly string[] {
  return environment.settings.workspaceRoots ?? [environment.settings.cwd];
}

/**
 * The portable sandbox intent of a sandboxed attempt in `environment`. `workspaceRoots` is always
 * sent: the executor would otherwise fall back to the command's cwd as a writable root.
 */
export function sandboxContextFor(environment: Environment): SandboxContext {
  return {
    profile: environment.settings.permissionProfile,
    workspaceRoots: writableWorkspaceRoots(environment).map((root) => pathToFileUri(root)),
    networkAccess: environment.settings.networkAccess,
    writableRoots: undefined,
    network: environment.settings.managedNetwork === undefined ? undefined : 'proxied',
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
  const network = sandbox === undefined ? undefined : request.environment.settings.managedNetwork;
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
    enforceManagedNetwork: network !== undefined,
    managedNetwork:
      network === undefined
        ? undefined
        : { loopbackPorts: [...(network.loopbackPorts ?? [])], allowLocalBinding: false },
    networkProxy:
      network === undefined
        ? undefined
        : {
            allowedDomains: [...(network.allowedDomains ?? [])],
            deniedDomains: [...(network.deniedDomains ?? [])],
            policyCallbacks: network.askForUnknownHosts ?? true,
            policyDecisionTimeoutMs: network.decisionTimeoutMs,
          },
  };
}

/** The executor's `network/policyRequest` answered by the host's approval. */
function networkDecider(request: LaunchRequest): NetworkPolicyDecider | undefined {
  const approve = request.approveNetwork;
  if (approve === undefined) return undefined;
  return async ({ request: target }) =>
    (await approve({ host: target.host, port: target.port, protocol: target.protocol }))
      ? { type: 'allow' }
      : { type: 'deny', reason: 'denied by the user' };
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
  const managed = sandbox !== undefined && environment.settings.managedNetwork !== undefined;
  // A remote environment, a shell snapshot and a managed network all need an exec-server.
  if (environment.isRemote || request.shellSnapshot !== undefined || managed) {
    let started: ExecProcess;
    try {
      const params = execServerParams(request, sandbox, attempt.retry);
      const startOptions = managed ? { networkPolicyDecider: networkDecider(request) } : {};
      try {
        started = await environment.backend.start(params, startOptions);
      } catch (error) {
        // The executor still retains a finished process under the plain id (ids are reused):
        // start under a fresh suffixed id instead, as the original does for sandboxed launches.
        if (!isDuplicateProcessId(error) || params.processId !== String(request.processId)) throw error;
        started = await environment.backend.start(
          { ...params, processId: execServerProcessId(request.processId, true) },
          startOptions,
        );
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
      rootPins: environment.rootPins,
      ...(environment.commandLimits === undefined ? {} : { limits: environment.commandLimits }),
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
