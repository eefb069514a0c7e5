import {
  type ExecServerClient,
  type ExecServerClientOptions,
  RemoteBackend,
  RemoteFileSystem,
} from '@execd/exec-client';
import { guardSpawned, LocalBackend, type LocalBackendOptions, LocalFileSystem } from '@execd/exec-server';
import type { EnvironmentInfo, EnvironmentStatus, Logger } from '@execd/protocol';
import type { ExecBackend, ExecFileSystem } from '@execd/protocol/contract';
import type { ForkServer } from '@execd/pty-utils';
import { type CommandLimits, PreparedSandboxes, SandboxRootPins } from '@execd/sandboxing';
import {
  type EnvironmentSettings,
  type EnvironmentSettingsOptions,
  localSettings,
  remoteSettings,
} from './environment-settings.ts';
import { unavailableFileSystem } from './unavailable-file-system.ts';

/** The id of this machine's environment unless another is given. */
export const LOCAL_ENVIRONMENT_ID = 'local';

/** The id of a remote environment unless another is given. */
export const REMOTE_ENVIRONMENT_ID = 'remote';

/** Options of {@link Environment.local}. */
export interface LocalEnvironmentOptions extends EnvironmentSettingsOptions {
  /** Default `local`. */
  readonly id?: string | undefined;
  /**
   * Resource limits of each sandboxed command (default sandboxing's `DEFAULT_COMMAND_LIMITS`:
   * processes, memory, file size; `false`: none). A hit limit ends the command's output with an
   * `execd: …` line saying which.
   */
  readonly commandLimits?: CommandLimits | false | undefined;
  /**
   * Start, after a sandboxed command of a kind that repeats, the next sandbox of its kind ahead
   * (sandboxing's `PreparedSandboxes`, owned and closed by the environment): the next such
   * command starts in about a third of the time. Default false: a waiting sandbox keeps the
   * workspace's empty `.git`/`.codex`/`.agents` mount points while it waits (up to 60 s).
   */
  readonly prepareSandboxes?: boolean | undefined;
  /**
   * Start commands on pipes from this fork server (pty-utils' `ForkServer`) instead of forking
   * this process: cheaper when this process is large, and no command ever holds one of its
   * descriptors. Owned by the caller (close it after the environment).
   */
  readonly forkServer?: ForkServer | undefined;
  /** Options of the in-process backend (retention, spawner, …). */
  readonly backendOptions?: LocalBackendOptions | undefined;
  /** Use this backend (owned from now on) instead of creating one. */
  readonly backend?: LocalBackend | undefined;
  readonly logger?: Logger | undefined;
}

/** Options of {@link Environment.connect}. */
export interface RemoteEnvironmentOptions extends EnvironmentSettingsOptions {
  /** Default `remote`. */
  readonly id?: string | undefined;
  /** `ws://host:port` of the exec-server. */
  readonly url: string;
  /** Bearer token for servers that require one. */
  readonly token?: string | undefined;
  /** Further client options (codec, timeouts, recovery). */
  readonly client?: Omit<ExecServerClientOptions, 'url' | 'token'> | undefined;
  readonly logger?: Logger | undefined;
}

interface EnvironmentParts {
  readonly id: string;
  readonly isRemote: boolean;
  readonly backend: ExecBackend;
  readonly settings: EnvironmentSettings;
  readonly info?: EnvironmentInfo | undefined;
  readonly rootPins?: SandboxRootPins | undefined;
  readonly commandLimits?: CommandLimits | false | undefined;
  readonly preparedSandboxes?: PreparedSandboxes | undefined;
  readonly forkServer?: ForkServer | undefined;
  readonly fs?: ExecFileSystem | undefined;
}

/**
 * A place where commands run (the original's `TurnEnvironment`): this machine, through an
 * in-process backend, or another one behind an exec-server, through a remote backend; with the
 * settings the agent side adds (cwd, shell, permission profile, roots, network, env policy,
 * login, snapshot). One concept for both: the manager reads `settings` and starts processes on
 * `backend` (per-start options, such as the network-policy decider, travel through the contract).
 * The environment owns its backend and closes it.
 */
export class Environment implements AsyncDisposable {
  /** Stable id the model may name in `environment_id`. */
  readonly id: string;
  /** True when commands run on another machine through an exec-server connection. */
  readonly isRemote: boolean;
  /** Where processes start. */
  readonly backend: ExecBackend;
  readonly settings: EnvironmentSettings;
  /**
   * Local only: the writable roots, pinned when the environment was created, so that a later
   * launch whose root resolves elsewhere (a command swapped a folder on its path for a symlink)
   * is refused. A remote executor pins its own.
   */
  readonly rootPins: SandboxRootPins | undefined;
  /** Local only: the resource limits of sandboxed commands (undefined: the defaults). */
  readonly commandLimits: CommandLimits | false | undefined;
  /** Local only, with `prepareSandboxes`: the sandboxes started ahead (closed with the environment). */
  readonly preparedSandboxes: PreparedSandboxes | undefined;
  /** Local only: the fork server commands on pipes are started by (the caller's). */
  readonly forkServer: ForkServer | undefined;
  /**
   * The executor's filesystem (what `apply_patch`, AGENTS.md discovery and `view_image` use):
   * this host's for a local environment, the exec-server's `fs/*` methods for a remote one.
   */
  readonly fs: ExecFileSystem;
  #info: Promise<EnvironmentInfo> | undefined;
  #closing: Promise<void> | undefined;

  private constructor(parts: EnvironmentParts) {
    this.id = parts.id;
    this.isRemote = parts.isRemote;
    this.backend = parts.backend;
    this.settings = parts.settings;
    this.rootPins = parts.rootPins;
    this.commandLimits = parts.commandLimits;
    this.preparedSandboxes = parts.preparedSandboxes;
    this.forkServer = parts.forkServer;
    this.fs =
      parts.fs ??
      (parts.backend instanceof RemoteBackend
        ? new RemoteFileSystem(parts.backend.client)
        : parts.isRemote
          ? unavailableFileSystem()
          : new LocalFileSystem());
    if (parts.info !== undefined) this.#info = Promise.resolve(parts.info);
  }

  /** This machine: commands run in this Node process (directly, or in its in-process backend). */
  static local(options: LocalEnvironmentOptions = {}): Environment {
    const settings = localSettings(options);
    const rootPins = new SandboxRootPins();
    // Pinned now, not at the first command: a folder on a root's path may be swapped before then.
    rootPins.pinNow(settings.workspaceRoots ?? [settings.cwd]);
    // Guarded like every command from their start (the orphan watchdog), closed with the backend.
    const preparedSandboxes = options.prepareSandboxes
      ? new PreparedSandboxes({ onStarted: guardSpawned, logger: options.logger })
      : undefined;
    const backend =
      options.backend ??
      new LocalBackend({
        ...(options.logger === undefined ? {} : { logger: options.logger }),
        ...(options.commandLimits === undefined ? {} : { commandLimits: options.commandLimits }),
        sandboxRootPins: rootPins,
        ...(preparedSandboxes === undefined ? {} : { preparedSandboxes }),
        ...(options.forkServer === undefined ? {} : { forkServer: options.forkServer }),
        ...options.backendOptions,
      });
    return new Environment({
      id: options.id ?? LOCAL_ENVIRONMENT_ID,
      isRemote: false,
      backend,
      settings,
      rootPins,
      commandLimits: options.commandLimits,
      preparedSandboxes,
      forkServer: options.forkServer,
    });
  }

  /** Connects to an exec-server (`ws://…`), reads its `environment/info`, and wraps it. */
  static async connect(options: RemoteEnvironmentOptions): Promise<Environment> {
    const backend = await RemoteBackend.connect({
      ...options.client,
      url: options.url,
      ...(options.token === undefined ? {} : { token: options.token }),
      ...(options.logger === undefined ? {} : { logger: options.logger }),
    });
    return Environment.remote(backend, options);
  }

  /**
   * A connected backend to another machine (owned from now on), with the agent side's settings;
   * the executor's `environment/info` supplies the default cwd and shell.
   */
  static async remote(
    backend: ExecBackend,
    options: EnvironmentSettingsOptions & { readonly id?: string | undefined } = {},
  ): Promise<Environment> {
    let info: EnvironmentInfo;
    try {
      info = await backend.environmentInfo();
    } catch (error) {
      await backend.close();
      throw error;
    }
    return new Environment({
      id: options.id ?? REMOTE_ENVIRONMENT_ID,
      isRemote: true,
      backend,
      settings: remoteSettings(options, info),
      info,
    });
  }

  /** The client of a remote environment (session id, state, failure); undefined for a local one. */
  get client(): ExecServerClient | undefined {
    return this.backend instanceof RemoteBackend ? this.backend.client : undefined;
  }

  /** `environment/info` of the executor (asked once; a failed attempt is retried next time). */
  info(): Promise<EnvironmentInfo> {
    if (this.#info === undefined) {
      const asked = this.backend.environmentInfo();
      this.#info = asked;
      asked.catch(() => {
        if (this.#info === asked) this.#info = undefined;
      });
    }
    return this.#info;
  }

  /** `environment/status` of a remote executor; a local one is always ready. */
  async status(): Promise<EnvironmentStatus> {
    return this.client?.environmentStatus() ?? { status: 'ready' };
  }

  /** Terminates the processes started here, ends any prepared sandbox, releases the backend. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.backend.close();
      await this.preparedSandboxes?.close();
    })();
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
