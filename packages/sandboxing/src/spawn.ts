import { ExecError, type Logger, type SandboxType } from '@execd/protocol';
import {
  type ForkServer,
  joinWrapperPerl,
  type PipeSpawnOptions,
  type SpawnedProcess,
  spawnPipe,
  spawnPty,
} from '@execd/pty-utils';
import { containProcess } from './contained-process.ts';
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
import { LAUNCHER_ENV } from './linux/launcher.ts';
import type { WaitingSandbox } from './linux/linux-sandbox.ts';
import { CONTAINMENT_MARKER_VARIABLE, newContainmentMarker } from './linux/marker-scan.ts';
import { makePlaceholders, mountFingerprint } from './linux/mount-fingerprint.ts';
import type { WaiterPrograms } from './linux/waiter.ts';
import type { SandboxSelection } from './prepare.ts';
import type { PreparedSandboxes } from './prepared-sandboxes.ts';
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
  /**
   * Sandboxes started ahead of their commands (see `PreparedSandboxes`): a bubblewrap command
   * takes a waiting sandbox whose plan is identical to its own instead of starting one, and the
   * next one of its kind is started after it. Without it every sandbox starts cold.
   */
  readonly preparedSandboxes?: PreparedSandboxes | undefined;
  /**
   * Commands (and their sandboxes) are started by it rather than forked here: on pipes, and in a
   * terminal where its helper can (pty-utils' `ForkServer.canStartInTerminal`).
   */
  readonly forkServer?: ForkServer | undefined;
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
  /**
   * The `cgroup.procs` file(s) of the command's own cgroup, when it has one: every process of its
   * tree is listed there, daemons in sessions of their own included (for a watchdog that must
   * kill them if this process dies without cleaning up).
   */
  readonly cgroupProcsFiles?: readonly string[] | undefined;
  /**
   * Empty host folders the command's sandbox holds as mount points (see
   * `LinuxSandbox.placeholders`); this process removes them once the command is done. Listed for
   * a watchdog that must remove them if this process dies first.
   */
  readonly placeholders?: readonly string[] | undefined;
  /**
   * True when the command runs in a sandbox started before it was asked for (taken from
   * `preparedSandboxes`): its process was reported to the pool's `onStarted` then, not now.
   */
  readonly prepared?: true | undefined;
}

/** How a sandbox is started to wait for its command (see `waiter.ts`); internal. */
export interface WaiterStart {
  /** `/proc/<this pid>/fd/<n>` of the payload file. */
  readonly payloadPath: string;
  /** What the waiter may run (see `chooseWaiter`). */
  readonly programs: WaiterPrograms;
}

/** What a command's plan must match to run in a waiter. */
interface WaiterMatch {
  readonly identity: string;
  /** Its mount paths' fingerprint, taken before bubblewrap started (see `mountFingerprint`). */
  readonly fingerprint: string;
  /** The launcher lines it was planned with (its cgroup's), for the command's plan. */
  readonly launcherPreamble: readonly string[];
}

/** A started waiter: its launch, and what a command's plan must match to run in it. */
export interface StartedWaiter extends WaiterMatch {
  readonly result: SpawnResult;
}

const NO_EVENTS: LimitEvents = Object.freeze({ memoryLimitHit: false, oomKills: 0, pidsLimitHit: false });

/** How an unsandboxed command joins its group: pty-utils' spawn options of these names. */
type CgroupJoin = Pick<PipeSpawnOptions, 'joinCgroups' | 'cgroupHome'>;

/** The cgroup of one command, how it joins it, and (sandboxed) its limits. */
interface CommandGroupSetup {
  readonly group?: CommandCgroup;
  /** Launcher lines of a bubblewrap command: join the group, set the file-size limit. */
  readonly preamble: string[];
  /** An unsandboxed command's group: pty-utils forks it inside (v1) or joins it before exec. */
  readonly joinCgroups?: CgroupJoin;
  /** Set for a bubblewrap command. */
  readonly limits?: SpawnedLimits;
  /** An unsandboxed command without a group: the environment marker a `/proc` scan finds. */
  readonly marker?: string;
}

/**
 * The cgroup every command gets where the host lets the executor create one (see
 * `detectContainment`): a bubblewrap command's with its limits (none with `limits: false`), an
 * unsandboxed command's without limits, in one controller's hierarchy (membership is all it is
 * for). Without a group a sandboxed command is still contained by its pid namespace, an
 * unsandboxed one by its session.
 */
async function commandGroup(request: SpawnRequest): Promise<CommandGroupSetup> {
  if (process.platform !== 'linux') return { preamble: [] };
  const bubblewrap = underBubblewrap(request);
  if (!bubblewrap && request.sandbox !== undefined && request.sandbox.type !== 'none')
    return { preamble: [] };
  const control = request.resourceControl ?? (await detectResourceControl({ logger: request.logger }));
  if (!bubblewrap) {
    // Without a group, the marker scan finds what left the session (see marker-scan.ts).
    if (control.kind === 'none' || joinWrapperPerl() === null)
      return { preamble: [], marker: newContainmentMarker() };
    try {
      const group = await createCommandCgroup(membershipOnly(control), {}, { logger: request.logger });
      return {
        group,
        preamble: [],
        joinCgroups: { joinCgroups: group.procsFiles, cgroupHome: group.homeTasksFiles },
      };
    } catch (error) {
      request.logger?.warn('no cgroup for an unsandboxed command; containment by marker scan', { error });
      return { preamble: [], marker: newContainmentMarker() };
    }
  }
  const wanted = request.limits === false ? {} : (request.limits ?? DEFAULT_COMMAND_LIMITS);
  const group =
    control.kind === 'none'
      ? undefined
      : await createCommandCgroup(control, wanted, { logger: request.logger });
  const inForce: CommandLimits = { ...(group?.limits ?? {}), maxFileBytes: wanted.maxFileBytes };
  const events = (): Promise<LimitEvents> => group?.readEvents() ?? Promise.resolve(NO_EVENTS);
  return {
    ...(group === undefined ? {} : { group }),
    preamble: launcherLimitLines({ procsFiles: group?.procsFiles, maxFileBytes: wanted.maxFileBytes }),
    ...(request.limits === false
      ? {}
      : { limits: { inForce, events, describeHit: async () => formatLimitHit(await events(), inForce) } }),
  };
}

/** The command runs under bubblewrap (its group is then its launcher's to join, with limits). */
function underBubblewrap(request: SpawnRequest): boolean {
  return request.sandbox?.type === 'linuxSeccomp';
}

/** One hierarchy of a v1 control (pids if it has it): a group there lists every member. */
function membershipOnly(control: Exclude<ResourceControl, { kind: 'none' }>): ResourceControl {
  if (control.kind === 'cgroup2' || control.controllers.length <= 1) return control;
  const one = control.controllers.includes('pids') ? 'pids' : control.controllers[0]!;
  return { ...control, controllers: [one] };
}

/**
 * Launches a command (the original's `spawn_process`): wraps it in its sandbox, then spawns it
 * with pty-utils, in a PTY when `tty`, else on pipes with stdin piped or /dev/null. A `proxied`
 * command with `managedNetwork` is started inside a fresh network namespace held by the proxy's
 * bridge (which listens before the command exists), with the proxy variables in its environment.
 * Every command is contained (see `containProcess`): ending it ends its whole tree, daemons
 * included, and its interrupt reaches the command inside its sandbox.
 * Rejects with `unsupported` when the sandbox cannot run here, `spawnFailed` when the program
 * (or the bridge) cannot be started.
 */
export async function spawnProcess(request: SpawnRequest): Promise<SpawnResult> {
  const pool = request.preparedSandboxes;
  if (pool === undefined) return (await launch(request, undefined)).result;
  const result = (await pool.take(request)) ?? (await launch(request, undefined)).result;
  pool.refillAfter(request, result.process);
  return result;
}

/** Starts a sandbox that waits for its command (see `PreparedSandboxes`); internal. */
export async function startWaiter(request: SpawnRequest, waiter: WaiterStart): Promise<StartedWaiter> {
  const { result, waiting } = await launch(request, waiter);
  if (waiting === undefined) throw new Error('sandboxing: a waiter was started without a waiting plan');
  return { result, ...waiting };
}

/**
 * The identity and payload of `request`'s own plan, laid out with `launcherPreamble` (a waiter's
 * cgroup lines) for comparison with a waiter; undefined when it has no waiting form. Throws what
 * a cold start would (a missing program, a changed root, an unsupported sandbox). Internal.
 */
export async function planForWaiter(
  request: SpawnRequest,
  launcherPreamble: readonly string[],
): Promise<WaitingSandbox | undefined> {
  const plan = await planSandboxCommand({
    ...request,
    launcherPreamble,
    proxySocketDir: request.managedNetwork?.proxy.socketDir,
  });
  // The waiter holds every placeholder this plan does: releasing here removes nothing.
  await plan.release();
  return plan.waiting;
}

interface Launched {
  readonly result: SpawnResult;
  /** Set for a waiter. */
  readonly waiting?: WaiterMatch;
}

/** A waiter's launch: what `spawnPrepared` adds to a result (the preamble is `launch`'s). */
type WaiterFacts = { readonly [K in 'identity' | 'fingerprint']?: WaiterMatch[K] | undefined };

async function launch(request: SpawnRequest, waiter: WaiterStart | undefined): Promise<Launched> {
  const making = commandGroup(request);
  let setup: CommandGroupSetup | undefined;
  let result: SpawnResult & WaiterFacts;
  try {
    if (underBubblewrap(request)) {
      // A bubblewrap command's group goes into its launcher lines only: it is made while the
      // plan looks at the disk, which waits for it just before laying the command line out.
      const preamble = making.then((made) => made.preamble);
      preamble.catch(() => undefined); // the plan awaits it later: not an unhandled rejection meanwhile
      result = await spawnPrepared(request, preamble, undefined, waiter);
      setup = await making;
    } else {
      setup = await making;
      const prepared =
        setup.marker === undefined
          ? request
          : { ...request, env: { ...request.env, [CONTAINMENT_MARKER_VARIABLE]: setup.marker } };
      result = await spawnPrepared(prepared, setup.preamble, setup.joinCgroups, waiter);
    }
  } catch (error) {
    // The group may still be on its way (the plan refused the command first): removed once made.
    await making.then(
      (made) => made.group?.close(),
      () => undefined,
    );
    throw error;
  }
  // Once the command is done (exited, output ended), whatever it left in its cgroup (a daemon in
  // its own session) is killed and the group removed; its events are kept for `describeHit`.
  const process = containProcess(result.process, {
    group: setup.group,
    marker: setup.marker,
    bubblewrap: result.sandboxType === 'linuxSeccomp',
  });
  const { identity, fingerprint, ...launched } = result;
  return {
    result: {
      ...launched,
      process,
      ...(setup.limits === undefined ? {} : { limits: setup.limits }),
      ...(setup.group === undefined ? {} : { cgroupProcsFiles: setup.group.procsFiles }),
    },
    ...(identity === undefined || fingerprint === undefined
      ? {}
      : { waiting: { identity, fingerprint, launcherPreamble: setup.preamble } }),
  };
}

/** Lays out the plan's command line (once) and spawns it in a PTY or on pipes. */
async function spawnPlanned(
  request: SpawnRequest,
  plan: SandboxPlan,
  route: NetworkRoute | undefined,
  joinCgroups: CgroupJoin | undefined,
  waiter: WaiterStart | undefined,
): Promise<SpawnedProcess> {
  const { argv, env } = waiter === undefined ? plan.commandLine(route) : waitingLine(plan, waiter, route);
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
    ...joinCgroups,
  };
  return request.tty
    ? spawnPty({ ...options, cols: request.cols, rows: request.rows, forkServer: request.forkServer })
    : spawnPipe({ ...options, stdin: request.stdinOpen ? 'pipe' : 'null', forkServer: request.forkServer });
}

/** A waiter's command line: only for a plan with a waiting form, never behind a bridge. */
function waitingLine(plan: SandboxPlan, waiter: WaiterStart, route: NetworkRoute | undefined) {
  if (plan.waiting === undefined || route !== undefined)
    throw new ExecError('unsupported', 'this sandbox cannot be prepared before its command');
  return { argv: plan.waiting.line(waiter.payloadPath, waiter.programs), env: LAUNCHER_ENV };
}

async function spawnPrepared(
  request: SpawnRequest,
  launcherPreamble: readonly string[] | Promise<readonly string[]>,
  joinCgroups: CgroupJoin | undefined,
  waiter: WaiterStart | undefined,
): Promise<SpawnResult & WaiterFacts> {
  const managed = request.managedNetwork;
  // Everything that can refuse the command (unsupported, invalidParams, a missing program)
  // happens here, before a bridge is started.
  const plan = await planSandboxCommand({
    ...request,
    launcherPreamble,
    proxySocketDir: managed?.proxy.socketDir,
  });
  let launched: { process: SpawnedProcess; network?: SpawnedNetwork };
  let fingerprint: string | undefined;
  try {
    if (waiter !== undefined && plan.waiting !== undefined) {
      // Taken before bubblewrap mounts anything: a folder swapped after this point (a mount
      // following a renamed folder) shows as a difference when a command comes.
      await makePlaceholders(plan.placeholders);
      fingerprint = await mountFingerprint(plan.waiting.mountPaths);
    }
    launched =
      plan.proxyRouted && managed !== undefined
        ? await spawnBehindBridge(managed, request.logger, (route) =>
            spawnPlanned(request, plan, route, joinCgroups, waiter),
          )
        : { process: await spawnPlanned(request, plan, undefined, joinCgroups, waiter) };
  } catch (error) {
    await plan.release();
    throw error;
  }
  void launched.process.closed.then(plan.release, plan.release);
  return {
    ...launched,
    sandboxType: plan.sandboxType,
    ...(plan.placeholders.length === 0 ? {} : { placeholders: plan.placeholders }),
    ...(waiter === undefined ? {} : { identity: plan.waiting?.identity, fingerprint }),
  };
}
