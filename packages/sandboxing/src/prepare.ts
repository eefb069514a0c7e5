import { dirname } from 'node:path';
import { ExecError, type SandboxContext, type SandboxType } from '@execd/protocol';
import { resolveSpawn } from '@execd/pty-utils';
import { planFileSystem } from './file-system-plan.ts';
import { buildBwrapArgs } from './linux/bwrap-args.ts';
import { probeBwrap } from './linux/bwrap-probe.ts';
import { commandEnvFlags, LAUNCHER_ENV, SECCOMP_FD, withLauncher } from './linux/launcher.ts';
import { locateBwrap } from './linux/locate-bwrap.ts';
import { seccompFilterPath } from './linux/seccomp-fd.ts';
import { buildSeccompFilter } from './linux/seccomp-filter.ts';
import { buildSeatbeltArgv, buildSeatbeltPolicy } from './macos/seatbelt.ts';
import { holdPlaceholders } from './placeholders.ts';
import {
  isNetworkDisabled,
  type ResolvePolicyOptions,
  resolveSandboxPolicy,
  type SandboxPolicy,
} from './policy.ts';
import type { SandboxRootPins } from './root-pins.ts';
import { type SelectSandboxOptions, selectSandbox } from './select.ts';

/**
 * Environment hint set when the policy keeps the network off (spec §4.2), as the original; also
 * for `proxied` without a managed network (enforced as off), not for a routed `proxied` command.
 */
export const NETWORK_DISABLED_ENV_VAR = 'CODEX_SANDBOX_NETWORK_DISABLED';
/** Environment hint set under Seatbelt, as the original. */
export const SEATBELT_ENV_VAR = 'CODEX_SANDBOX';

/** A resolved policy and the sandbox chosen to enforce it. */
export interface SandboxSelection {
  readonly policy: SandboxPolicy;
  readonly type: SandboxType;
}

/**
 * Resolves the wire `ExecParams.sandbox` against a cwd and selects the sandbox with its `mode`
 * (default `auto`). Undefined when there is no context (the command runs unsandboxed).
 */
export function sandboxFromContext(
  context: SandboxContext | undefined,
  cwd: string,
  options: ResolvePolicyOptions & SelectSandboxOptions = {},
): SandboxSelection | undefined {
  if (context === undefined) return undefined;
  const policy = resolveSandboxPolicy(context, cwd, options);
  return { policy, type: selectSandbox(policy, context.mode ?? 'auto', options) };
}

/** A `proxied` command that will run behind a managed-network bridge, and what to hide from it. */
export interface SandboxProxyRouting {
  /** The proxy's Unix sockets (the bridge's targets); their directories are masked in the sandbox. */
  readonly proxySocketPaths: readonly string[];
}

/** A command to wrap in its sandbox. */
export interface SandboxCommandRequest {
  /** Program and arguments; never empty. */
  readonly command: readonly string[];
  /** Absolute working directory. */
  readonly cwd: string;
  /** The command's entire environment. */
  readonly env: Readonly<Record<string, string>>;
  /** What the command sees as `argv[0]`. */
  readonly arg0?: string | undefined;
  /** Undefined: run as is. */
  readonly sandbox?: SandboxSelection | undefined;
  /** A PTY child (bubblewrap then keeps the session, for job control). */
  readonly tty: boolean;
  /** Where to look for `bwrap` (default: this process's `PATH`). */
  readonly bwrapSearchPath?: string | undefined;
  /**
   * For a `proxied` policy: the command will be run through a managed-network bridge (see
   * `@execd/network-proxy`), so build the ProxyRouted sandbox. Without it, `proxied` is enforced
   * as `off` (fail closed). Ignored for other network modes.
   */
  readonly managedNetwork?: SandboxProxyRouting | undefined;
  /**
   * The environment's pinned writable roots (default: this process's `DEFAULT_ROOT_PINS`): a
   * root whose resolution changed since it was pinned is refused (`invalidParams`).
   */
  readonly rootPins?: SandboxRootPins | undefined;
  /** Executor secrets (e.g. its auth token file) masked in every sandbox, full access included. */
  readonly hiddenPaths?: readonly string[] | undefined;
  /**
   * bash lines the Linux launcher runs as the executor, outside the sandbox, just before the fd
   * sweep and bubblewrap (joining the command's cgroups, setting its rlimits: see
   * `launcherLimitLines`). Never model input.
   */
  readonly launcherPreamble?: readonly string[] | undefined;
}

/** The bubblewrap part of a Linux sandbox command, for callers that put something between the launcher and bwrap. */
export interface BwrapLaunch {
  /** `bwrap <flags> -- <command…>`: the command's environment flags come first, right after bwrap. */
  readonly inner: readonly string[];
  /** How many arguments after bwrap's path carry the command's environment (`--clearenv`, `--setenv`s). */
  readonly envFlagCount: number;
  /** Wraps a (possibly prefixed, e.g. `nsenter … -- bwrap …`) inner argv in the same launcher. */
  relaunch(inner: readonly string[]): string[];
}

/** The command after wrapping: what pty-utils spawns. */
export interface SandboxCommand {
  /** The launcher argv; always ends with the request's `command`. */
  readonly argv: readonly string[];
  /**
   * The environment to spawn with. Unwrapped or under Seatbelt: the request's plus the sandbox
   * hints. Under bubblewrap: the launcher's fixed `LAUNCHER_ENV` only; the command's environment
   * (with the hints) is handed to bubblewrap as `--clearenv`/`--setenv` arguments, so no variable
   * the command chose (LD_PRELOAD, BASH_ENV, …) ever acts in the launcher or in bubblewrap.
   */
  readonly env: Readonly<Record<string, string>>;
  /** Linux only: the bubblewrap part, for the managed network's namespace prefix. */
  readonly bwrap?: BwrapLaunch | undefined;
  /**
   * Call once the command has exited (idempotent; `spawnProcess` does it): removes the empty
   * mount points bubblewrap had to create for missing protected names, once no other sandbox of
   * this process uses them. A no-op for unwrapped commands.
   */
  release(): Promise<void>;
  /** `argv[0]` override for the spawned program (only when nothing wraps the command). */
  readonly arg0: string | undefined;
  /** The sandbox actually applied. */
  readonly sandboxType: SandboxType;
  /**
   * True when `argv` was built for the managed network (`proxied` with `managedNetwork`): it must
   * be run through the bridge (`NetworkBridge.wrapArgv`), or it stays without network.
   */
  readonly proxyRouted: boolean;
}

const nothingToRelease = (): Promise<void> => Promise.resolve();

function unsupported(message: string): ExecError {
  return new ExecError('unsupported', message);
}

async function linuxCommand(
  request: SandboxCommandRequest,
  policy: SandboxPolicy,
  env: Readonly<Record<string, string>>,
  routing: SandboxProxyRouting | undefined,
): Promise<{
  argv: string[];
  env: Readonly<Record<string, string>>;
  bwrap: BwrapLaunch;
  release: () => Promise<void>;
}> {
  if (process.platform !== 'linux')
    throw unsupported(`the linuxSeccomp sandbox needs Linux, not ${process.platform}`);
  const untrustedDirs = [policy.cwd, request.cwd, ...policy.writableRoots.map((root) => root.path)];
  const bwrap = locateBwrap({ searchPath: request.bwrapSearchPath, untrustedDirs });
  if (bwrap === undefined) {
    throw unsupported(
      'bubblewrap (bwrap) was not found on PATH outside the workspace in a root-owned, not world-writable folder; install bubblewrap',
    );
  }
  const caps = await probeBwrap(bwrap);
  const plan = await planFileSystem(policy, { rootPins: request.rootPins, hiddenPaths: request.hiddenPaths });
  // A proxied command keeps --unshare-net (the bridge's wrapArgv drops it): run without the
  // bridge, it has no network at all.
  const networkDisabled = isNetworkDisabled(policy);
  const flags = buildBwrapArgs({
    plan,
    networkDisabled,
    newSession: !request.tty,
    mountProc: caps.mountProc,
    disableUserns: caps.disableUserns,
    seccompFd: SECCOMP_FD,
    maskedDirs: [...new Set(routing?.proxySocketPaths.map((path) => dirname(path)) ?? [])],
  });
  if (request.arg0 !== undefined && request.arg0 !== request.command[0]) {
    if (!caps.argv0)
      throw unsupported('an arg0 override under bubblewrap needs bwrap 0.9 or later (--argv0)');
    flags.splice(flags.length - 1, 0, '--argv0', request.arg0); // before the closing `--`
  }
  const filter = buildSeccompFilter({
    arch: caps.arch,
    networkDisabled,
    proxyRouted: routing !== undefined,
    denyUserNamespaces: !caps.disableUserns,
  });
  const filterPath = seccompFilterPath(filter);
  const envFlags = commandEnvFlags(env);
  const inner = [caps.path, ...envFlags, ...flags, ...request.command];
  const preamble = request.launcherPreamble ?? [];
  const relaunch = (argv: readonly string[]): string[] => withLauncher(filterPath, argv, preamble);
  const placeholders = plan.writableRoots.flatMap(({ readOnly }) =>
    readOnly.filter((item) => item.type === 'missing').map((item) => item.path),
  );
  return {
    argv: relaunch(inner),
    env: LAUNCHER_ENV,
    bwrap: { inner, envFlagCount: envFlags.length, relaunch },
    release: holdPlaceholders(placeholders),
  };
}

async function macosArgv(request: SandboxCommandRequest, policy: SandboxPolicy): Promise<string[]> {
  if (process.platform !== 'darwin')
    throw unsupported(`the macosSeatbelt sandbox needs macOS, not ${process.platform}`);
  if (request.arg0 !== undefined && request.arg0 !== request.command[0]) {
    throw unsupported('sandbox-exec cannot override arg0');
  }
  const plan = await planFileSystem(policy, { rootPins: request.rootPins, hiddenPaths: request.hiddenPaths });
  const seatbelt = buildSeatbeltPolicy(plan, isNetworkDisabled(policy));
  return buildSeatbeltArgv(seatbelt, request.command);
}

/** The routing to apply, or undefined; throws `unsupported` when `proxied` cannot be enforced here. */
function proxyRouting(request: SandboxCommandRequest): SandboxProxyRouting | undefined {
  const selection = request.sandbox;
  if (request.managedNetwork === undefined || selection?.policy.network !== 'proxied') return undefined;
  // The bridge only confines a command the sandbox keeps from leaving its network namespace (and
  // from host Unix sockets): never run a proxied command unconfined.
  if (selection.type !== 'linuxSeccomp') {
    throw unsupported(
      selection.type === 'none'
        ? 'a proxied network needs a sandbox, but none was selected (sandbox mode `forbid`, or no sandbox on this platform)'
        : `a proxied network needs the linuxSeccomp sandbox (bubblewrap), not ${selection.type}`,
    );
  }
  return request.managedNetwork;
}

/**
 * Wraps a command in its sandbox (the original's `transform`): the bubblewrap launcher on
 * Linux, `sandbox-exec` on macOS, the command itself for `none`; and sets the environment
 * hints. The command is validated first (a missing program is a `spawnFailed` ExecError, as
 * unsandboxed). A sandbox that cannot run here is an `unsupported` ExecError saying why.
 * A `proxied` policy with `managedNetwork` gets the ProxyRouted sandbox (`proxyRouted: true`).
 */
export async function prepareSandboxCommand(request: SandboxCommandRequest): Promise<SandboxCommand> {
  const selection = request.sandbox;
  const routing = proxyRouting(request);
  // Unsandboxed, pty-utils validates the program itself; wrapped, it would only see the wrapper.
  if (selection !== undefined && selection.type !== 'none') {
    resolveSpawn({ argv: request.command, cwd: request.cwd, env: request.env, arg0: request.arg0 });
  }
  const env: Record<string, string> = { ...request.env };
  if (selection !== undefined && routing === undefined && isNetworkDisabled(selection.policy))
    env[NETWORK_DISABLED_ENV_VAR] = '1';
  const type = selection?.type ?? 'none';
  const proxyRouted = routing !== undefined;
  switch (type) {
    case 'none':
      return {
        argv: [...request.command],
        env,
        arg0: request.arg0,
        sandboxType: 'none',
        proxyRouted,
        release: nothingToRelease,
      };
    case 'linuxSeccomp': {
      const linux = await linuxCommand(request, selection!.policy, env, routing);
      return { ...linux, arg0: undefined, sandboxType: type, proxyRouted };
    }
    case 'macosSeatbelt':
      env[SEATBELT_ENV_VAR] = 'seatbelt';
      return {
        argv: await macosArgv(request, selection!.policy),
        env,
        arg0: undefined,
        sandboxType: type,
        proxyRouted,
        release: nothingToRelease,
      };
    default:
      throw unsupported(`the ${type} sandbox is not implemented by execd`);
  }
}
