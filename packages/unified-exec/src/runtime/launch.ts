import { randomUUID } from 'node:crypto';
import { guardSpawned } from '@execd/exec-server';
import {
  ExecError,
  type ExecParams,
  isFileSystemSandboxContext,
  type Logger,
  pathToFileUri,
  type SandboxContext,
  type SandboxParam,
  type ShellSnapshotRequest,
} from '@execd/protocol';
import type { ExecProcess, NetworkPolicyDecider } from '@execd/protocol/contract';
import { originalSandboxFor, sandboxFromContext, spawnProcess } from '@execd/sandboxing';
import { pathExportsAfterRestore } from '@execd/shell-snapshot';
import type { Environment } from '../environment/environment.ts';
import type { ManagedNetworkOptions } from '../environment/environment-settings.ts';
import { UnifiedExecError } from '../errors.ts';
import type { CompiledNetworkDomains } from '../exec-policy/policy.ts';
import type { NetworkApprovalTarget } from '../orchestrator/approval.ts';
import type { PermissionGrant } from '../orchestrator/permission-grants.ts';
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
  /** Folders re-exported in front of PATH after the snapshot restore (runtime helpers). */
  readonly pathPrepends?: readonly string[] | undefined;
  readonly environment: Environment;
  readonly earlyExitGraceMs: number;
  /** Decides the managed network's questions about hosts no pattern covers (true allows). */
  readonly approveNetwork?: ((target: NetworkApprovalTarget) => Promise<boolean>) | undefined;
  /** The exec policy's `network_rule` hosts, laid over the managed network's patterns. */
  readonly networkRuleDomains?: CompiledNetworkDomains | undefined;
  readonly logger?: Logger | undefined;
}

/**
 * The managed network's allowed and denied patterns with the exec policy's network rules laid
 * over them (the original's `apply_exec_policy_network_rules`): an allowed host leaves the denied
 * list and joins the allowed one, a denied host the other way round.
 */
export function networkDomainsWithRules(
  network: ManagedNetworkOptions,
  rules: CompiledNetworkDomains | undefined,
): { allowedDomains: string[]; deniedDomains: string[] } {
  let allowedDomains = [...(network.allowedDomains ?? [])];
  let deniedDomains = [...(network.deniedDomains ?? [])];
  const same = (pattern: string, host: string) => pattern.trim().replace(/\.+$/, '').toLowerCase() === host;
  for (const host of rules?.allowed ?? []) {
    deniedDomains = deniedDomains.filter((pattern) => !same(pattern, host));
    allowedDomains = [...allowedDomains.filter((pattern) => !same(pattern, host)), host];
  }
  for (const host of rules?.denied ?? []) {
    allowedDomains = allowedDomains.filter((pattern) => !same(pattern, host));
    deniedDomains = [...deniedDomains.filter((pattern) => !same(pattern, host)), host];
  }
  return { allowedDomains, deniedDomains };
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
export function sandboxContextFor(environment: Environment, grant?: PermissionGrant): SandboxContext {
  const base = environment.settings.permissionProfile;
  const extraWrites = grant?.write ?? [];
  // Extra writable folders widen a read-only profile to exactly those folders (no workspace,
  // no temporary folders), and add to a workspace-write one.
  const widenedReadOnly = base === 'read-only' && extraWrites.length > 0;
  return {
    profile: widenedReadOnly ? 'workspace-write' : base,
    workspaceRoots: widenedReadOnly
      ? []
      : writableWorkspaceRoots(environment).map((root) => pathToFileUri(root)),
    networkAccess: environment.settings.networkAccess || grant?.network === true,
    writableRoots: extraWrites.length > 0 ? extraWrites.map((path) => pathToFileUri(path)) : undefined,
    network: environment.settings.managedNetwork === undefined ? undefined : 'proxied',
    excludeTmpdirEnvVar: undefined,
    excludeSlashTmp: undefined,
    mode: 'auto',
    ...(widenedReadOnly ? { excludeTmpdirEnvVar: true, excludeSlashTmp: true } : {}),
  };
}

/**
 * The sandbox of an attempt with its grant. Extra readable paths cannot be said in execd's form:
 * with any, the attempt's sandbox goes in the original's form with a `read` entry per path
 * appended (the original's `effective_file_system_sandbox_policy`), which also lifts a default
 * credential-store denial the path names.
 */
export function sandboxParamFor(
  environment: Environment,
  grant: PermissionGrant | undefined,
  cwd: string,
): SandboxParam {
  const context = sandboxContextFor(environment, grant);
  const reads = grant?.read ?? [];
  if (reads.length === 0 || context.profile === 'danger-full-access') return context;
  const original = originalSandboxFor(context, cwd);
  const { permissions } = original;
  if (permissions.type !== 'managed' || permissions.file_system.type !== 'restricted') return context;
  const entries = [...permissions.file_system.entries];
  for (const path of reads) {
    const entry = { path: { type: 'path' as const, path: pathToFileUri(path) }, access: 'read' as const };
    if (!entries.some((e) => JSON.stringify(e) === JSON.stringify(entry))) entries.push(entry);
  }
  return {
    ...original,
    permissions: { ...permissions, file_system: { ...permissions.file_system, entries } },
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

/**
 * The sandbox to send to a remote executor: execd's form to execd, the original's
 * (`FileSystemSandboxContext`) to an original exec-server, which knows no other. An original peer
 * is one whose `environment/info` lacks execd's `processResize` capability.
 */
export async function sandboxForPeer(
  environment: Environment,
  sandbox: SandboxParam | undefined,
  cwd: string,
): Promise<SandboxParam | undefined> {
  if (sandbox === undefined || !environment.isRemote || isFileSystemSandboxContext(sandbox)) return sandbox;
  const info = await environment.info();
  return info.capabilities.processResize === true ? sandbox : originalSandboxFor(sandbox, cwd);
}

/** `process {id} already exists` (-32600) from `process/start`. */
function isDuplicateProcessId(error: unknown): boolean {
  return ExecError.is(error) && error.code === 'invalidRequest' && /already exists/.test(error.message);
}

/** The `process/start` params of an attempt (spec §4.3 step 1). */
export function execServerParams(
  request: LaunchRequest,
  sandbox: SandboxParam | undefined,
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
    argv: withPathPrepends(request),
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
            ...networkDomainsWithRules(network, request.networkRuleDomains),
            policyCallbacks: network.askForUnknownHosts ?? true,
            policyDecisionTimeoutMs: network.decisionTimeoutMs,
          },
  };
}

/**
 * The argv to send: with a snapshot restore and runtime PATH folders, the script first puts them
 * back in front of the restored PATH (the profile's PATH would otherwise hide them).
 */
function withPathPrepends(request: LaunchRequest): string[] {
  const argv = [...request.command];
  const prepends = request.pathPrepends ?? [];
  if (request.shellSnapshot === undefined || prepends.length === 0 || argv.length !== 3) return argv;
  argv[2] = `${pathExportsAfterRestore(prepends)}${argv[2]}`;
  return argv;
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
  const sandbox = attempt.sandboxed ? sandboxParamFor(environment, attempt.grant, request.cwd) : undefined;
  const options = { tty: request.tty, earlyExitGraceMs: request.earlyExitGraceMs, logger: request.logger };
  const managed = sandbox !== undefined && environment.settings.managedNetwork !== undefined;
  // A remote environment, a shell snapshot and a managed network all need an exec-server.
  if (environment.isRemote || request.shellSnapshot !== undefined || managed) {
    let started: ExecProcess;
    try {
      const params = execServerParams(
        request,
        await sandboxForPeer(environment, sandbox, request.cwd),
        attempt.retry,
      );
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
      preparedSandboxes: environment.preparedSandboxes,
      forkServer: environment.forkServer,
    });
  } catch (error) {
    throw UnifiedExecError.createProcess(error instanceof Error ? error.message : String(error), error);
  }
  request.logger?.debug('unified-exec: spawned', {
    processId: request.processId,
    sandboxType: spawned.sandboxType,
  });
  // As the exec-server backend's: a command must not outlive this process if it is killed
  // without cleaning up (the original's children get a parent-death signal).
  // (A prepared sandbox's was guarded when it started: see `Environment.local`.)
  return UnifiedExecProcess.start(
    new LocalSpawnDriver(spawned.prepared ? spawned : guardSpawned(spawned)),
    options,
  );
}
