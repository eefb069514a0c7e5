import type { NetworkBridge, NetworkProxy, StartBridgeOptions } from '@execd/network-proxy';
import { spawnWithManagedNetwork } from '@execd/network-proxy';
import type { SandboxType } from '@execd/protocol';
import { type Logger, type SpawnedProcess, spawnPipe, spawnPty } from '@execd/pty-utils';
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
import { prepareSandboxCommand, type SandboxSelection } from './prepare.ts';
import type { SandboxRootPins } from './root-pins.ts';

/** The managed network of a `proxied` command: its proxy, and how to start the bridge to it. */
export interface SpawnManagedNetwork {
  /**
   * The proxy this command's traffic must go through (one per process: decider answers are cached
   * per proxy). The caller owns it and closes it once the process is done.
   */
  readonly proxy: NetworkProxy;
  /** Bridge settings (ports inside the sandbox, user namespace, script, start timeout, logger). */
  readonly bridge?: Omit<StartBridgeOptions, 'proxy'> | undefined;
}

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

/** The bridge of a `proxied` command; it is torn down when the command has exited and its output ended. */
export interface SpawnedNetwork extends AsyncDisposable {
  readonly bridge: NetworkBridge;
  /** Resolves once the bridge is gone (after the command closed, or `close()`). Never rejects. */
  readonly closed: Promise<void>;
  /** Stops the bridge now (the command then has no network). Idempotent. */
  close(): Promise<void>;
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

async function spawnPrepared(
  request: SpawnRequest,
  launcherPreamble: readonly string[],
): Promise<SpawnResult> {
  const managed = request.managedNetwork;
  const prepared = await prepareSandboxCommand({
    ...request,
    launcherPreamble,
    managedNetwork:
      managed === undefined
        ? undefined
        : { proxySocketPaths: [managed.proxy.httpSocketPath, managed.proxy.socksSocketPath] },
  });
  request.logger?.debug('sandboxing: spawn', {
    sandboxType: prepared.sandboxType,
    proxyRouted: prepared.proxyRouted,
    argv: prepared.argv,
  });
  const spawn = (argv: readonly string[], env: Readonly<Record<string, string>>): Promise<SpawnedProcess> => {
    const options = {
      argv,
      cwd: request.cwd,
      env,
      arg0: prepared.arg0,
      drainTimeoutMs: request.drainTimeoutMs,
      logger: request.logger,
    };
    return request.tty
      ? spawnPty({ ...options, cols: request.cols, rows: request.rows })
      : spawnPipe({ ...options, stdin: request.stdinOpen ? 'pipe' : 'null' });
  };
  if (!prepared.proxyRouted || managed === undefined) {
    let child: SpawnedProcess;
    try {
      child = await spawn(prepared.argv, prepared.env);
    } catch (error) {
      await prepared.release();
      throw error;
    }
    void child.closed.then(prepared.release, prepared.release);
    return { process: child, sandboxType: prepared.sandboxType };
  }
  // `launcher nsenter ... -- bwrap ...`: the launcher opens the seccomp filter outside the bridge's
  // namespaces (a user-namespace bridge could not open it), nsenter passes fd 9 on to bwrap. The
  // proxy variables join the command's environment as bwrap `--setenv`s (after its own, so they
  // win); nsenter and the launcher keep the fixed launcher environment.
  const bwrap = prepared.bwrap;
  if (bwrap === undefined) throw new Error('sandboxing: a proxy-routed command without a bubblewrap launch');
  let routed: Awaited<
    ReturnType<typeof spawnWithManagedNetwork<{ child: SpawnedProcess; exited: Promise<unknown> }>>
  >;
  try {
    routed = await spawnWithManagedNetwork({
      argv: bwrap.inner,
      env: {},
      proxy: managed.proxy,
      bridge: { logger: request.logger, ...managed.bridge },
      // The bridge stays up until the command's output has ended, not just until it exited: a
      // descendant still holding its pipes may still be using the network.
      spawn: async ({ argv, env: proxyEnv }) => {
        const at = argv.indexOf(bwrap.inner[0]!);
        if (at < 0) throw new Error('sandboxing: the managed network dropped bubblewrap from the argv');
        const proxyFlags = Object.entries(proxyEnv).flatMap(([name, value]) => ['--setenv', name, value]);
        const withProxyEnv = [...argv];
        withProxyEnv.splice(at + 1 + bwrap.envFlagCount, 0, ...proxyFlags);
        const child = await spawn(bwrap.relaunch(withProxyEnv), prepared.env);
        return { child, exited: child.closed };
      },
    });
  } catch (error) {
    await prepared.release();
    throw error;
  }
  void routed.child.exited.then(prepared.release, prepared.release);
  const network: SpawnedNetwork = {
    bridge: routed.bridge,
    closed: routed.closed,
    close: routed.close,
    [Symbol.asyncDispose]: routed.close,
  };
  return { process: routed.child.child, sandboxType: prepared.sandboxType, network };
}
