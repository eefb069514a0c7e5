import { ExecError, type SandboxType } from '@execd/protocol';
import { resolveSpawn } from '@execd/pty-utils';
import { planFileSystem } from './file-system-plan.ts';
import type { NetworkRoute } from './linux/command-line.ts';
import { LAUNCHER_ENV } from './linux/launcher.ts';
import { planLinuxSandbox, type WaitingSandbox } from './linux/linux-sandbox.ts';
import { buildSeatbeltArgv, buildSeatbeltPolicy } from './macos/seatbelt.ts';
import { isNetworkDisabled, type SandboxPolicy } from './policy.ts';
import type { SandboxCommandRequest } from './prepare.ts';

/**
 * Environment hint set when the policy keeps the network off (spec §4.2), as the original; also
 * for `proxied` without a managed network (enforced as off), not for a routed `proxied` command.
 */
export const NETWORK_DISABLED_ENV_VAR = 'CODEX_SANDBOX_NETWORK_DISABLED';
/** Environment hint set under Seatbelt, as the original. */
export const SEATBELT_ENV_VAR = 'CODEX_SANDBOX';

/** A command to plan: the request, with only the proxy's part of a managed network. */
export interface SandboxPlanRequest extends Omit<SandboxCommandRequest, 'managedNetwork'> {
  /**
   * For a `proxied` policy: the proxy's socket folder (`proxy.socketDir`): the command will be
   * routed through a bridge to that proxy. Without it `proxied` is enforced as `off`.
   */
  readonly proxySocketDir?: string | undefined;
}

/** The command line and environment to spawn. */
export interface PlannedCommandLine {
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

/** A command whose sandbox is chosen and checked; only its command line is left to lay out. */
export interface SandboxPlan {
  readonly sandboxType: SandboxType;
  /** The command is `proxied` and must be laid out with its bridge's route. */
  readonly proxyRouted: boolean;
  /** `argv[0]` override for the spawned program (only when nothing wraps the command). */
  readonly arg0: string | undefined;
  /** Lays out the command line, once; a routed plan needs `route` (a started bridge). */
  commandLine(route: NetworkRoute | undefined): PlannedCommandLine;
  /** See `LinuxSandbox.placeholders` (none without bubblewrap). */
  readonly placeholders: readonly string[];
  /** See `SandboxCommand.release`. */
  release(): Promise<void>;
  /** See `LinuxSandbox.waiting` (bubblewrap only). */
  readonly waiting?: WaitingSandbox | undefined;
}

const nothingToRelease = (): Promise<void> => Promise.resolve();

function unsupported(message: string): ExecError {
  return new ExecError('unsupported', message);
}

async function macosArgv(request: SandboxPlanRequest, policy: SandboxPolicy): Promise<string[]> {
  if (process.platform !== 'darwin')
    throw unsupported(`the macosSeatbelt sandbox needs macOS, not ${process.platform}`);
  if (request.arg0 !== undefined && request.arg0 !== request.command[0]) {
    throw unsupported('sandbox-exec cannot override arg0');
  }
  const plan = await planFileSystem(policy, { rootPins: request.rootPins, hiddenPaths: request.hiddenPaths });
  const seatbelt = buildSeatbeltPolicy(plan, isNetworkDisabled(policy));
  return buildSeatbeltArgv(seatbelt, request.command);
}

/** The proxy socket folder to route through, or undefined; `unsupported` when `proxied` cannot be enforced here. */
function proxyRouting(request: SandboxPlanRequest): string | undefined {
  const selection = request.sandbox;
  if (request.proxySocketDir === undefined || selection?.policy.network !== 'proxied') return undefined;
  // The bridge only confines a command the sandbox keeps from leaving its network namespace (and
  // from host Unix sockets): never run a proxied command unconfined.
  if (selection.type !== 'linuxSeccomp') {
    throw unsupported(
      selection.type === 'none'
        ? 'a proxied network needs a sandbox, but none was selected (sandbox mode `forbid`, or no sandbox on this platform)'
        : `a proxied network needs the linuxSeccomp sandbox (bubblewrap), not ${selection.type}`,
    );
  }
  return request.proxySocketDir;
}

/** A plan whose command line is fixed (no sandbox, Seatbelt). */
function fixedPlan(
  sandboxType: SandboxType,
  line: PlannedCommandLine,
  arg0: string | undefined,
): SandboxPlan {
  return {
    sandboxType,
    proxyRouted: false,
    arg0,
    commandLine: () => line,
    placeholders: [],
    release: nothingToRelease,
  };
}

/**
 * Chooses and checks a command's sandbox (the first half of the original's `transform`): the
 * command is validated (a missing program is `spawnFailed`, as unsandboxed), the environment
 * hints are set, and a sandbox that cannot run here is `unsupported`. Nothing is started; for a
 * routed `proxied` command, the caller starts the bridge and lays out the line with its route.
 */
export async function planSandboxCommand(request: SandboxPlanRequest): Promise<SandboxPlan> {
  const selection = request.sandbox;
  const proxySocketDir = proxyRouting(request);
  // Unsandboxed, pty-utils validates the program itself; wrapped, it would only see the wrapper.
  if (selection !== undefined && selection.type !== 'none') {
    resolveSpawn({ argv: request.command, cwd: request.cwd, env: request.env, arg0: request.arg0 });
  }
  const env: Record<string, string> = { ...request.env };
  if (selection !== undefined && proxySocketDir === undefined && isNetworkDisabled(selection.policy))
    env[NETWORK_DISABLED_ENV_VAR] = '1';
  const type = selection?.type ?? 'none';
  switch (type) {
    case 'none':
      return fixedPlan('none', { argv: [...request.command], env }, request.arg0);
    case 'linuxSeccomp': {
      const linux = await planLinuxSandbox({ ...request, policy: selection!.policy, env, proxySocketDir });
      return {
        sandboxType: type,
        proxyRouted: proxySocketDir !== undefined,
        arg0: undefined,
        commandLine: (route) => ({ argv: linux.commandLine(route), env: LAUNCHER_ENV }),
        placeholders: linux.placeholders,
        release: linux.release,
        ...(linux.waiting === undefined ? {} : { waiting: linux.waiting }),
      };
    }
    case 'macosSeatbelt':
      env[SEATBELT_ENV_VAR] = 'seatbelt';
      return fixedPlan(type, { argv: await macosArgv(request, selection!.policy), env }, undefined);
    default:
      throw unsupported(`the ${type} sandbox is not implemented by execd`);
  }
}
