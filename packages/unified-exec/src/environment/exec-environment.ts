import type { ExecBackend, ExecProcess } from '@execd/exec-server';
import type { NetworkPolicyDecider } from '@execd/exec-server/client';
import type { ExecEnvPolicy, ExecParams, PermissionProfileName } from '@execd/protocol';
import type { Shell } from '../tools/shell.ts';

/**
 * Where unified-exec commands run (the original's `TurnEnvironment`): this machine, or another
 * one behind an exec-server. The manager reads its defaults and, for the exec-server path, its
 * backend; the environment owns that backend and releases it in `close()`.
 */
export interface ExecEnvironment extends AsyncDisposable {
  /** Stable id the model may name in `environment_id` (`local` by default). */
  readonly id: string;
  /** True when commands run on another machine through an exec-server connection. */
  readonly isRemote: boolean;
  /** Default working directory: an absolute path on the executor. */
  readonly cwd: string;
  /** The shell used when the model names none. */
  readonly shell: Shell;
  /** What a sandboxed attempt may touch. */
  readonly permissionProfile: PermissionProfileName;
  /**
   * Project roots writable under `workspace-write`; undefined means the environment's `cwd`.
   * Never the command's cwd: a `workdir` outside these roots runs there read-only.
   */
  readonly workspaceRoots: readonly string[] | undefined;
  /** Network reach of sandboxed commands (default: off under read-only / workspace-write). */
  readonly networkAccess: boolean;
  /** The shell environment policy applied to every command's environment (spec §7). */
  readonly envPolicy: ExecEnvPolicy;
  /** Whether `login: true` is allowed; also the default of `login`. */
  readonly allowLoginShell: boolean;
  /** Ask the executor to capture the login shell once and restore it (shell snapshot V2). */
  readonly shellSnapshot: boolean;
  /** The managed network of sandboxed commands, if any (else their network is on or off). */
  readonly managedNetwork: ManagedNetworkOptions | undefined;
  /**
   * The exec-server backend: the remote connection, or (local) an in-process backend created
   * on first use, which runs commands that need a shell snapshot or a managed network.
   */
  execBackend(): Promise<ExecBackend>;
  /**
   * Starts a process on the exec-server backend; `networkPolicyDecider` answers the managed
   * network's questions about this process (hosts no pattern covers).
   */
  startProcess(params: ExecParams, options?: StartProcessOptions): Promise<ExecProcess>;
  /** Releases the backend (terminating what it still runs). Idempotent. */
  close(): Promise<void>;
}

/**
 * A managed network for sandboxed commands (`sandbox.network: proxied`): they reach only the
 * allowed hosts, through a proxy on the executor; hosts no pattern covers are put to the host's
 * Approver (purpose `network`) while the command waits.
 */
export interface ManagedNetworkOptions {
  /** Host patterns allowed (`*.npmjs.org`, `example.com:8443`, `**.github.com`). */
  readonly allowedDomains?: readonly string[] | undefined;
  /** Host patterns denied; deny wins. */
  readonly deniedDomains?: readonly string[] | undefined;
  /** Ports on the executor's loopback the command may use. */
  readonly loopbackPorts?: readonly number[] | undefined;
  /** Ask about hosts no pattern covers (default true); false denies them. */
  readonly askForUnknownHosts?: boolean | undefined;
  /** How long the executor waits for an answer before denying (default: the executor's, 30 s). */
  readonly decisionTimeoutMs?: number | undefined;
}

/** Options of {@link ExecEnvironment.startProcess}. */
export interface StartProcessOptions {
  /** Answers this process's managed-network questions. */
  readonly networkPolicyDecider?: NetworkPolicyDecider | undefined;
}

/** The default shell environment policy: inherit everything but credential-looking names. */
export const DEFAULT_ENV_POLICY: ExecEnvPolicy = Object.freeze({
  inherit: 'all',
  ignoreDefaultExcludes: false,
  exclude: [],
  set: {},
  includeOnly: [],
}) as ExecEnvPolicy;

/** Common options of the environment factories. */
export interface ExecEnvironmentOptions {
  /** Environment id (default `local` / `remote`). */
  readonly id?: string | undefined;
  /** Permission profile of sandboxed attempts (default `workspace-write`). */
  readonly permissionProfile?: PermissionProfileName | undefined;
  /**
   * Writable project roots under `workspace-write`, resolved against `cwd` (default: `cwd`
   * itself). The model's `workdir` never adds a writable root.
   */
  readonly workspaceRoots?: readonly string[] | undefined;
  /** Let sandboxed commands use the network (default false). */
  readonly networkAccess?: boolean | undefined;
  /** Shell environment policy (default {@link DEFAULT_ENV_POLICY}). */
  readonly envPolicy?: ExecEnvPolicy | undefined;
  /** Default true. */
  readonly allowLoginShell?: boolean | undefined;
  /** Restore a captured login shell for `-lc` commands (default false). */
  readonly shellSnapshot?: boolean | undefined;
  /** A managed network for sandboxed commands (default: none). */
  readonly managedNetwork?: ManagedNetworkOptions | undefined;
}
