import type { Logger, SandboxType } from '@execd/protocol';
import { type SpawnedProcess, spawnPipe, spawnPty } from '@execd/pty-utils';
import {
  type CommandCgroup,
  type CommandLimits,
  createCommandCgroup,
  DEFAULT_COMMAND_LIMITS,
  detectResourceControl,
  formatLimitHit,
  type LimitEvents,
  launcherLimitLines,
  type ResourceControl,
} from './limits/index.ts';
import type { NetworkRoute } from './linux/command-line.ts';
import type { SandboxSelection } from './prepare.ts';
import type { SandboxRootPins } from './root-pins.ts';
import { planSandboxCommand, type SandboxPlan } from './sandbox-plan.ts';
import { type SpawnedNetwork, type SpawnManagedNetwork, spawnBehindBridge } from './spawn-network.ts';

/** One command to launch, sandboxed or not (the original's `SpawnRequest`). */
export interface SpawnRequest {
  /** Program and arguments; never empty. */
  readonly command: readonly string[];
  /** Absolute working directory. */
  readonly cwd: string;
  /** The command's entire environment (the sandbox's hints are added to a copy). */
  readonly env: Readonly<Record<string, string>>;
  /** What the command sees as `argv[0]`. */
  readonly arg0?: string | undefined;
  /** The resolved policy and the sandbox type to apply; undefined runs unsandboxed. */
  readonly sandbox?: SandboxSelection | undefined;
  /** Spawn in a PTY (stdin always writable). */
  readonly tty: boolean;
  /** Pipes only: keep stdin writable; otherwise stdin is /dev/null. */
  readonly stdinOpen: boolean;
  /** PTY size (default 80x24). */
  readonly cols?: number | undefined;
  readonly rows?: number | undefined;
  /** After exit, wait at most this long for output to drain (pty-utils default otherwise). */
  readonly drainTimeoutMs?: number | undefined;
  /** Where to look for `bwrap` (default: this process's `PATH`). */
  readonly bwrapSearchPath?: string | undefined;
  /**
   * For a `proxied` policy: run the command in its own network namespace whose only way out is
   * this proxy. Without it `proxied` is enforced as `off`. Ignored for other network modes.
   */
  readonly managedNetwork?: SpawnManagedNetwork | undefined;
  /** The environment's pinned writable roots (see `SandboxRootPins`; default: process-wide pins). */
  readonly rootPins?: SandboxRootPins | undefined;
  /** Executor secrets (e.g. its auth token file) masked in every sandbox. */
  readonly hiddenPaths?: readonly string[] | undefined;
  /**
   * Resource limits of a bubblewrap-sandboxed command (default `DEFAULT_COMMAND_LIMITS`; `false`
   * for none): processes, memory and CPU time in a cgroup of its own, file size as an rlimit.
   */
  readonly limits?: CommandLimits | false | undefined;
  /** What this host can enforce (default: `detectResourceControl()`, once per process). */
  readonly resourceControl?: ResourceControl | undefined;
  readonly logger?: Logger | undefined;
}

/** The resource limits a command runs under, and what it hit. */
export interface SpawnedLimits {
  /** The limits in force (those the host can enforce; the file size always). */
  readonly inForce: CommandLimits;
  /** What the command's cgroup saw (all false without one). Final once the process closed. */
  events(): Promise<LimitEvents>;
  /** A sentence for the tool result when a limit was hit (`undefined` otherwise). Final once closed. */
  describeHit(): Promise<string | undefined>;
}

/** A launched child and the sandbox it actually runs under. */
export interface SpawnResult {
  readonly process: SpawnedProcess;
  readonly sandboxType: SandboxType;
  /** Set for a command routed through a managed network (`proxied` with `managedNetwork`). */
  readonly network?: SpawnedNetwork | undefined;
  /** Set for a command under bubblewrap: its resource limits. */
  readonly limits?: SpawnedLimits | undefined;
}

const NO_EVENTS: LimitEvents = Object.freeze({ memoryLimitHit: false, oomKills: 0, pidsLimitHit: false });

/** The cgroup (when the host has one) and the launcher lines for a sandboxed command's limits. */
async function commandLimits(
  request: SpawnRequest,
): Promise<{ group?: CommandCgroup; preamble: string[]; limits: SpawnedLimits } | undefined> {
  if (request.sandbox?.type !== 'linuxSeccomp' || request.limits === false) return undefined;
  const wanted = request.limits ?? DEFAULT_COMMAND_LIMITS;
  const control = request.resourceControl ?? (await detectResourceControl({ logger: request.logger }));
  const needsGroup =
    wanted.maxProcesses !== undefined ||
    wanted.maxMemoryBytes !== undefined ||
    wanted.maxCpuSeconds !== undefined;
  const group =
    needsGroup && control.kind !== 'none'
      ? await createCommandCgroup(control, wanted, { logger: request.logger })
      : undefined;
  const inForce: CommandLimits = { ...(group?.limits ?? {}), maxFileBytes: wanted.maxFileBytes };
  const events = (): Promise<LimitEvents> => group?.readEvents() ?? Promise.resolve(NO_EVENTS);
  return {
    ...(group === undefined ? {} : { group }),
    preamble: launcherLimitLines({ procsFiles: group?.procsFiles, maxFileBytes: wanted.maxFileBytes }),
    limits: { inForce, events, describeHit: async () => formatLimitHit(await events(), inForce) },
  };
}

/**
 * Launches a command (the original's `spawn_process`): wraps it in its sandbox, then spawns it
 * with pty-utils, in a PTY when `tty`, else on pipes with stdin piped or /dev/null. A `proxied`
 * command with `managedNetwork` is started inside a fresh network namespace held by the proxy's
 * bridge (which listens before the command exists), with the proxy variables in its environment.
 * Rejects with `unsupported` when the sandbox cannot run here, `spawnFailed` when the program
 * (or the bridge) cannot be started.
 */
export async function spawnProcess(request: SpawnRequest): Promise<SpawnResult> {
  const limits = await commandLimits(request);
  let result: SpawnResult;
  try {
    result = await spawnPrepared(request, limits?.preamble ?? []);
  } catch (error) {
    await limits?.group?.close();
    throw error;
  }
  if (limits === undefined) return result;
  // Once the command is done (exited, output ended), whatever it left in its cgroup (a daemon in
  // its own session) is killed and the group removed; its events are kept for `describeHit`.
  const group = limits.group;
  if (group !== undefined)
    void result.process.closed.then(
      () => group.close(),
      () => group.close(),
    );
  return { ...result, limits: limits.limits };
}

/** Lays out the plan's command line (once) and spawns it in a PTY or on pipes. */
async function spawnPlanned(
  request: SpawnRequest,
  plan: SandboxPlan,
  route: NetworkRoute | undefined,
): Promise<SpawnedProcess> {
  const { argv, env } = plan.commandLine(route);
  request.logger?.debug('sandboxing: spawn', {
    sandboxType: plan.sandboxType,
    proxyRouted: plan.proxyRouted,
    argv,
  });
  const options = {
    argv,
    cwd: request.cwd,
    env,
    arg0: plan.arg0,
    drainTimeoutMs: request.drainTimeoutMs,
    logger: request.logger,
  };
  return request.tty
    ? spawnPty({ ...options, cols: request.cols, rows: request.rows })
    : spawnPipe({ ...options, stdin: request.stdinOpen ? 'pipe' : 'null' });
}

async function spawnPrepared(
  request: SpawnRequest,
  launcherPreamble: readonly string[],
): Promise<SpawnResult> {
  const managed = request.managedNetwork;
  // Everything that can refuse the command (unsupported, invalidParams, a missing program)
  // happens here, before a bridge is started.
  const plan = await planSandboxCommand({
    ...request,
    launcherPreamble,
    proxySocketDir: managed?.proxy.socketDir,
  });
  let launched: { process: SpawnedProcess; network?: SpawnedNetwork };
  try {
    launched =
      plan.proxyRouted && managed !== undefined
        ? await spawnBehindBridge(managed, request.logger, (route) => spawnPlanned(request, plan, route))
        : { process: await spawnPlanned(request, plan, undefined) };
  } catch (error) {
    await plan.release();
    throw error;
  }
  void launched.process.closed.then(plan.release, plan.release);
  return { ...launched, sandboxType: plan.sandboxType };
}
