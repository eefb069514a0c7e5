import { isAbsolute, resolve } from 'node:path';
import {
  type ExecBackend,
  type ExecProcess,
  LocalBackend,
  type LocalBackendOptions,
  type Logger,
} from '@execd/exec-server';
import { type ExecEnvPolicy, ExecError, type ExecParams, type PermissionProfileName } from '@execd/protocol';
import { type CommandLimits, SandboxRootPins } from '@execd/sandboxing';
import { Shell } from '../tools/shell.ts';
import {
  DEFAULT_ENV_POLICY,
  type ExecEnvironment,
  type ExecEnvironmentOptions,
  type ManagedNetworkOptions,
  type StartProcessOptions,
} from './exec-environment.ts';
import { NetworkDeciders, withCloseHook } from './network-deciders.ts';

/** Options of a LocalExecEnvironment. */
export interface LocalExecEnvironmentOptions extends ExecEnvironmentOptions {
  /** Default working directory (default `process.cwd()`). */
  readonly cwd?: string | undefined;
  /** Default shell binary (default `$SHELL`, else `/bin/bash`). */
  readonly shell?: string | undefined;
  /** Options of the in-process exec-server backend (shell-snapshot launches). */
  readonly backendOptions?: LocalBackendOptions | undefined;
  /**
   * Resource limits of each sandboxed command (default sandboxing's `DEFAULT_COMMAND_LIMITS`:
   * processes, memory, file size; `false`: none). A hit limit ends the command's output with an
   * `execd: …` line saying which.
   */
  readonly commandLimits?: CommandLimits | false | undefined;
  /**
   * Use this backend (owned from now on) instead of creating one; its own network-policy
   * requester then answers managed-network questions.
   */
  readonly backend?: ExecBackend | undefined;
  readonly logger?: Logger | undefined;
}

/**
 * This machine. Commands are spawned directly (sandboxing's `spawnProcess`), except those that
 * need a shell snapshot, which go through an in-process exec-server backend created on first use.
 */
export class LocalExecEnvironment implements ExecEnvironment {
  readonly id: string;
  readonly isRemote = false;
  readonly cwd: string;
  readonly shell: Shell;
  readonly permissionProfile: PermissionProfileName;
  readonly workspaceRoots: readonly string[] | undefined;
  readonly networkAccess: boolean;
  readonly envPolicy: ExecEnvPolicy;
  readonly allowLoginShell: boolean;
  readonly shellSnapshot: boolean;
  readonly managedNetwork: ManagedNetworkOptions | undefined;
  /**
   * The writable roots, pinned when the environment is created: a later launch whose root now
   * resolves elsewhere (a command replaced a folder on its path with a symlink) is refused.
   */
  readonly rootPins: SandboxRootPins = new SandboxRootPins();
  readonly commandLimits: CommandLimits | false | undefined;
  readonly #backendOptions: LocalBackendOptions;
  readonly #deciders = new NetworkDeciders();
  #backend: ExecBackend | undefined;
  #closing: Promise<void> | undefined;

  constructor(options: LocalExecEnvironmentOptions = {}) {
    this.id = options.id ?? 'local';
    this.cwd = resolve(options.cwd ?? process.cwd());
    const shellPath = options.shell ?? process.env.SHELL;
    this.shell = Shell.fromPath(shellPath !== undefined && isAbsolute(shellPath) ? shellPath : '/bin/bash');
    this.permissionProfile = options.permissionProfile ?? 'workspace-write';
    this.workspaceRoots = options.workspaceRoots?.map((root) => resolve(this.cwd, root));
    this.networkAccess = options.networkAccess ?? false;
    this.envPolicy = options.envPolicy ?? DEFAULT_ENV_POLICY;
    this.allowLoginShell = options.allowLoginShell ?? true;
    this.shellSnapshot = options.shellSnapshot ?? false;
    this.managedNetwork = options.managedNetwork;
    this.commandLimits = options.commandLimits;
    this.#backend = options.backend;
    this.#backendOptions = {
      ...(options.logger === undefined ? {} : { logger: options.logger }),
      networkPolicyRequester: this.#deciders.requester,
      ...(options.commandLimits === undefined ? {} : { commandLimits: options.commandLimits }),
      sandboxRootPins: this.rootPins,
      ...options.backendOptions,
    };
    // Pinned now, not at the first command: a folder on a root's path may be swapped before then.
    this.rootPins.pinNow(this.workspaceRoots ?? [this.cwd]);
  }

  /** The in-process exec-server backend (created on first use). */
  async execBackend(): Promise<ExecBackend> {
    if (this.#closing !== undefined) throw new ExecError('invalidRequest', 'the local environment is closed');
    this.#backend ??= new LocalBackend(this.#backendOptions);
    return this.#backend;
  }

  /** Starts a process on the in-process backend; `networkPolicyDecider` answers its network questions. */
  async startProcess(params: ExecParams, options: StartProcessOptions = {}): Promise<ExecProcess> {
    const backend = await this.execBackend();
    const decider = options.networkPolicyDecider;
    if (decider === undefined) return backend.start(params);
    const registration = this.#deciders.register(params.processId, decider);
    try {
      return withCloseHook(await backend.start(params), () => registration[Symbol.dispose]());
    } catch (error) {
      registration[Symbol.dispose]();
      throw error;
    }
  }

  /** Kills what the in-process backend still runs. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.#backend?.close();
    })();
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
