import {
  isFileSystemSandboxContext,
  type SandboxParam,
  type SandboxPreference,
  type SandboxType,
} from '@execd/protocol';
import { type ResolvePolicyOptions, resolveSandboxParam, type SandboxPolicy } from './policy.ts';
import type { SandboxRootPins } from './root-pins.ts';
import { planSandboxCommand } from './sandbox-plan.ts';
import { type SelectSandboxOptions, selectSandbox } from './select.ts';

/** A resolved policy and the sandbox chosen to enforce it. */
export interface SandboxSelection {
  readonly policy: SandboxPolicy;
  readonly type: SandboxType;
}

/** The sandbox preference of either wire form (the original's: `external` means no sandbox of ours). */
function preferenceOf(context: SandboxParam, policy: SandboxPolicy): SandboxPreference {
  if (!isFileSystemSandboxContext(context)) return context.mode ?? 'auto';
  // `external`: another layer confines the file system; only a managed proxy needs our sandbox.
  return policy.source === 'external' && policy.network !== 'proxied' ? 'forbid' : 'auto';
}

/**
 * Resolves the wire `ExecParams.sandbox` (either form) against a cwd and selects the sandbox with
 * its `mode` (default `auto`). Undefined when there is no context (the command runs unsandboxed).
 */
export function sandboxFromContext(
  context: SandboxParam | undefined,
  cwd: string,
  options: ResolvePolicyOptions & SelectSandboxOptions = {},
): SandboxSelection | undefined {
  if (context === undefined) return undefined;
  const policy = resolveSandboxParam(context, cwd, options);
  return { policy, type: selectSandbox(policy, preferenceOf(context, policy), options) };
}

/**
 * The managed network of a `proxied` command: where the proxy's sockets are, and how to reach it
 * through a started bridge (`@execd/network-proxy`): `{ socketDir: proxy.socketDir, prefixArgv:
 * bridge.prefixArgv, env: bridge.env }`.
 */
export interface SandboxProxyRouting {
  /** The proxy's socket folder (`proxy.socketDir`): an empty read-only tmpfs covers it inside. */
  readonly socketDir: string;
  /** Put between the launcher and bubblewrap: the bridge's `nsenter … --`. */
  readonly prefixArgv: readonly string[];
  /** The proxy variables, added to the command's environment (they win over its own). */
  readonly env: Readonly<Record<string, string>>;
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
   * For a `proxied` policy: the started bridge to run the command behind (see
   * `SandboxProxyRouting`), which gets the ProxyRouted sandbox. Without it, `proxied` is enforced
   * as `off` (fail closed). Ignored for other network modes. (`spawnProcess` starts the bridge
   * itself, after the sandbox was checked: see its `managedNetwork`.)
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
   * `launcherLimitLines`). Never model input. A promise of them is awaited only once the disk
   * has been looked at, so that they can be made (the command's cgroup created) meanwhile; if it
   * rejects, planning does.
   */
  readonly launcherPreamble?: readonly string[] | Promise<readonly string[]> | undefined;
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
   * True when `argv` runs behind the managed network (`proxied` with `managedNetwork`):
   * `launcher -> bridge prefix -> bwrap` with the proxy variables, in the bridge's namespace.
   */
  readonly proxyRouted: boolean;
}

/**
 * Wraps a command in its sandbox (the original's `transform`): the bubblewrap launcher on
 * Linux, `sandbox-exec` on macOS, the command itself for `none`; and sets the environment
 * hints. The command is validated first (a missing program is a `spawnFailed` ExecError, as
 * unsandboxed). A sandbox that cannot run here is an `unsupported` ExecError saying why.
 * A `proxied` policy with `managedNetwork` gets the ProxyRouted sandbox behind that bridge
 * (`proxyRouted: true`).
 */
export async function prepareSandboxCommand(request: SandboxCommandRequest): Promise<SandboxCommand> {
  const routing = request.managedNetwork;
  const plan = await planSandboxCommand({ ...request, proxySocketDir: routing?.socketDir });
  const { argv, env } = plan.commandLine(routing);
  return {
    argv,
    env,
    release: plan.release,
    arg0: plan.arg0,
    sandboxType: plan.sandboxType,
    proxyRouted: plan.proxyRouted,
  };
}
