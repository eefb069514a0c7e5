import { posix } from 'node:path';
import type { ExecBackend, ExecProcess, Logger } from '@execd/exec-server';
import {
  type ExecServerClientOptions,
  RemoteBackend,
  type RemoteStartOptions,
} from '@execd/exec-server/client';
import {
  type EnvironmentInfo,
  type ExecEnvPolicy,
  type ExecParams,
  fileUriToPath,
  type PermissionProfileName,
} from '@execd/protocol';
import { Shell, type ShellType } from '../tools/shell.ts';
import {
  DEFAULT_ENV_POLICY,
  type ExecEnvironment,
  type ExecEnvironmentOptions,
  type ManagedNetworkOptions,
  type StartProcessOptions,
} from './exec-environment.ts';

/** Options of a RemoteExecEnvironment built around a backend. */
export interface RemoteExecEnvironmentOptions extends ExecEnvironmentOptions {
  /** Default working directory on the executor (default: the server's cwd, else `/`). */
  readonly cwd?: string | undefined;
  /** Default shell binary on the executor (default: the server's shell). */
  readonly shell?: string | undefined;
}

/** Options of {@link RemoteExecEnvironment.connect}. */
export interface ConnectRemoteEnvironmentOptions extends RemoteExecEnvironmentOptions {
  /** `ws://host:port` of the exec-server. */
  readonly url: string;
  /** Bearer token for servers that require one. */
  readonly token?: string | undefined;
  /** Further client options (codec, timeouts, recovery). */
  readonly client?: Omit<ExecServerClientOptions, 'url' | 'token'> | undefined;
  readonly logger?: Logger | undefined;
}

const SHELL_TYPES: readonly string[] = ['bash', 'zsh', 'sh', 'powershell', 'cmd'];

function shellOf(info: EnvironmentInfo, override: string | undefined): Shell {
  if (override !== undefined) return Shell.fromPath(override);
  const { name, path } = info.shell;
  return SHELL_TYPES.includes(name) ? new Shell(name as ShellType, path) : Shell.fromPath(path);
}

/**
 * Another machine behind an exec-server: every command goes through its backend (the client),
 * and the sandbox is applied there. Defaults (shell, cwd) come from the server's
 * `environment/info`. The environment owns the backend and closes it.
 */
export class RemoteExecEnvironment implements ExecEnvironment {
  readonly id: string;
  readonly isRemote = true;
  readonly cwd: string;
  readonly shell: Shell;
  readonly permissionProfile: PermissionProfileName;
  readonly workspaceRoots: readonly string[] | undefined;
  readonly networkAccess: boolean;
  readonly envPolicy: ExecEnvPolicy;
  readonly allowLoginShell: boolean;
  readonly shellSnapshot: boolean;
  readonly managedNetwork: ManagedNetworkOptions | undefined;
  /** What the server reported about itself. */
  readonly info: EnvironmentInfo;
  readonly #backend: ExecBackend;
  #closing: Promise<void> | undefined;

  /** Wraps a connected backend (owned from now on) and the server's `environment/info`. */
  constructor(backend: ExecBackend, info: EnvironmentInfo, options: RemoteExecEnvironmentOptions = {}) {
    this.#backend = backend;
    this.info = info;
    this.id = options.id ?? 'remote';
    const serverCwd = info.cwd === undefined ? '/' : fileUriToPath(info.cwd);
    this.cwd = posix.resolve(serverCwd, options.cwd ?? serverCwd);
    this.shell = shellOf(info, options.shell);
    this.permissionProfile = options.permissionProfile ?? 'workspace-write';
    this.workspaceRoots = options.workspaceRoots?.map((root) => posix.resolve(this.cwd, root));
    this.networkAccess = options.networkAccess ?? false;
    this.envPolicy = options.envPolicy ?? DEFAULT_ENV_POLICY;
    this.allowLoginShell = options.allowLoginShell ?? true;
    this.shellSnapshot = options.shellSnapshot ?? false;
    this.managedNetwork = options.managedNetwork;
  }

  /** Connects to an exec-server (`ws://…`), reads its `environment/info`, and wraps it. */
  static async connect(options: ConnectRemoteEnvironmentOptions): Promise<RemoteExecEnvironment> {
    const backend = await RemoteBackend.connect({
      ...options.client,
      url: options.url,
      ...(options.token === undefined ? {} : { token: options.token }),
      ...(options.logger === undefined ? {} : { logger: options.logger }),
    });
    try {
      return new RemoteExecEnvironment(backend, await backend.environmentInfo(), options);
    } catch (error) {
      await backend.close();
      throw error;
    }
  }

  /** The connection to the exec-server. */
  async execBackend(): Promise<ExecBackend> {
    return this.#backend;
  }

  /** Starts a process on the server; the decider answers its `network/policyRequest`s. */
  startProcess(params: ExecParams, options: StartProcessOptions = {}): Promise<ExecProcess> {
    const start = this.#backend.start.bind(this.#backend) as (
      params: ExecParams,
      options?: RemoteStartOptions,
    ) => Promise<ExecProcess>;
    // A RemoteBackend takes per-start options; another ExecBackend ignores them.
    return start(params, { networkPolicyDecider: options.networkPolicyDecider });
  }

  /** Terminates what this connection started and closes it. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= this.#backend.close();
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
