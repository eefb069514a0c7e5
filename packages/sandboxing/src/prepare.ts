import { dirname } from 'node:path';
import { ExecError, type SandboxContext, type SandboxType } from '@execd/protocol';
import { resolveSpawn } from '@execd/pty-utils';
import { planFileSystem } from './file-system-plan.ts';
import { buildBwrapArgs } from './linux/bwrap-args.ts';
import { probeBwrap } from './linux/bwrap-probe.ts';
import { locateBwrap } from './linux/locate-bwrap.ts';
import { seccompFilterPath } from './linux/seccomp-fd.ts';
import { buildSeccompFilter } from './linux/seccomp-filter.ts';
import { SECCOMP_FD, splitLauncherEnv, withSeccompLauncher } from './linux/wrapper.ts';
import { buildSeatbeltArgv, buildSeatbeltPolicy } from './macos/seatbelt.ts';
import {
  isNetworkDisabled,
  type ResolvePolicyOptions,
  resolveSandboxPolicy,
  type SandboxPolicy,
} from './policy.ts';
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
}

/** The command after wrapping: what pty-utils spawns. */
export interface SandboxCommand {
  /** The launcher argv; always ends with the request's `command`. */
  readonly argv: readonly string[];
  /**
   * The environment to spawn with: the request's plus the sandbox hints. Under bubblewrap the
   * variables a shell acts on at startup (BASH_ENV, SHELLOPTS, …) are left out here and set
   * for the command by bubblewrap, so the launcher shell outside the sandbox never sees them.
   */
  readonly env: Readonly<Record<string, string>>;
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

function unsupported(message: string): ExecError {
  return new ExecError('unsupported', message);
}

async function linuxCommand(
  request: SandboxCommandRequest,
  policy: SandboxPolicy,
  env: Readonly<Record<string, string>>,
  routing: SandboxProxyRouting | undefined,
): Promise<{ argv: string[]; env: Record<string, string> }> {
  if (process.platform !== 'linux')
    throw unsupported(`the linuxSeccomp sandbox needs Linux, not ${process.platform}`);
  const untrustedDirs = [policy.cwd, request.cwd, ...policy.writableRoots.map((root) => root.path)];
  const bwrap = locateBwrap({ searchPath: request.bwrapSearchPath, untrustedDirs });
  if (bwrap === undefined) {
    throw unsupported('bubblewrap (bwrap) was not found on PATH outside the workspace; install bubblewrap');
  }
  const caps = await probeBwrap(bwrap);
  const plan = planFileSystem(policy);
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
  const launcher = splitLauncherEnv(env);
  const extra = launcher.setenvFlags;
  if (request.arg0 !== undefined && request.arg0 !== request.command[0]) {
    if (!caps.argv0)
      throw unsupported('an arg0 override under bubblewrap needs bwrap 0.9 or later (--argv0)');
    extra.push('--argv0', request.arg0);
  }
  flags.splice(flags.length - 1, 0, ...extra); // before the closing `--`
  const filter = buildSeccompFilter({
    arch: caps.arch,
    networkDisabled,
    proxyRouted: routing !== undefined,
    denyUserNamespaces: !caps.disableUserns,
  });
  const argv = withSeccompLauncher(seccompFilterPath(filter), [caps.path, ...flags, ...request.command]);
  return { argv, env: launcher.env };
}

function macosArgv(request: SandboxCommandRequest, policy: SandboxPolicy): string[] {
  if (process.platform !== 'darwin')
    throw unsupported(`the macosSeatbelt sandbox needs macOS, not ${process.platform}`);
  if (request.arg0 !== undefined && request.arg0 !== request.command[0]) {
    throw unsupported('sandbox-exec cannot override arg0');
  }
  const seatbelt = buildSeatbeltPolicy(planFileSystem(policy), isNetworkDisabled(policy));
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
      return { argv: [...request.command], env, arg0: request.arg0, sandboxType: 'none', proxyRouted };
    case 'linuxSeccomp': {
      const linux = await linuxCommand(request, selection!.policy, env, routing);
      return { ...linux, arg0: undefined, sandboxType: type, proxyRouted };
    }
    case 'macosSeatbelt':
      env[SEATBELT_ENV_VAR] = 'seatbelt';
      return {
        argv: macosArgv(request, selection!.policy),
        env,
        arg0: undefined,
        sandboxType: type,
        proxyRouted,
      };
    default:
      throw unsupported(`the ${type} sandbox is not implemented by execd`);
  }
}
