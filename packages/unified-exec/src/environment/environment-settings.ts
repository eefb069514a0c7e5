import { isAbsolute, posix, resolve } from 'node:path';
import type { EnvironmentInfo, ExecEnvPolicy, PermissionProfileName } from '@execd/protocol';
import { fileUriToPath } from '@execd/protocol';
import { Shell, type ShellType } from '../tools/shell.ts';

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

/** The default shell environment policy: inherit everything but credential-looking names. */
export const DEFAULT_ENV_POLICY: ExecEnvPolicy = Object.freeze({
  inherit: 'all',
  ignoreDefaultExcludes: false,
  exclude: [],
  set: {},
  includeOnly: [],
}) as ExecEnvPolicy;

/** What the agent side adds to a place where commands run; every field is optional. */
export interface EnvironmentSettingsOptions {
  /** Default working directory (local: `process.cwd()`; remote: the server's cwd, else `/`). */
  readonly cwd?: string | undefined;
  /** Default shell binary (local: `$SHELL`, else `/bin/bash`; remote: the server's shell). */
  readonly shell?: string | undefined;
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
  /** Whether `login: true` is allowed; also the default of `login` (default true). */
  readonly allowLoginShell?: boolean | undefined;
  /** Restore a captured login shell for `-lc` commands (shell snapshot V2; default false). */
  readonly shellSnapshot?: boolean | undefined;
  /** A managed network for sandboxed commands (default: none). */
  readonly managedNetwork?: ManagedNetworkOptions | undefined;
}

/** {@link EnvironmentSettingsOptions} with every default applied: what the manager reads. */
export interface EnvironmentSettings {
  /** Absolute path on the executor. */
  readonly cwd: string;
  readonly shell: Shell;
  readonly permissionProfile: PermissionProfileName;
  /** Absolute paths; undefined means `cwd`. Never the command's cwd. */
  readonly workspaceRoots: readonly string[] | undefined;
  readonly networkAccess: boolean;
  readonly envPolicy: ExecEnvPolicy;
  readonly allowLoginShell: boolean;
  readonly shellSnapshot: boolean;
  readonly managedNetwork: ManagedNetworkOptions | undefined;
}

const SHELL_TYPES: readonly string[] = ['bash', 'zsh', 'sh', 'powershell', 'cmd'];

function common(
  options: EnvironmentSettingsOptions,
  cwd: string,
  shell: Shell,
  resolvePath: (base: string, path: string) => string,
): EnvironmentSettings {
  return {
    cwd,
    shell,
    permissionProfile: options.permissionProfile ?? 'workspace-write',
    workspaceRoots: options.workspaceRoots?.map((root) => resolvePath(cwd, root)),
    networkAccess: options.networkAccess ?? false,
    envPolicy: options.envPolicy ?? DEFAULT_ENV_POLICY,
    allowLoginShell: options.allowLoginShell ?? true,
    shellSnapshot: options.shellSnapshot ?? false,
    managedNetwork: options.managedNetwork,
  };
}

/** The settings of this machine: paths against `process.cwd()`, the shell from `$SHELL`. */
export function localSettings(options: EnvironmentSettingsOptions): EnvironmentSettings {
  const cwd = resolve(options.cwd ?? process.cwd());
  const shellPath = options.shell ?? process.env.SHELL;
  const shell = Shell.fromPath(shellPath !== undefined && isAbsolute(shellPath) ? shellPath : '/bin/bash');
  return common(options, cwd, shell, resolve);
}

/** The settings of a remote executor: POSIX paths against its cwd, its shell by default. */
export function remoteSettings(
  options: EnvironmentSettingsOptions,
  info: EnvironmentInfo,
): EnvironmentSettings {
  const serverCwd = info.cwd === undefined ? '/' : fileUriToPath(info.cwd);
  const cwd = posix.resolve(serverCwd, options.cwd ?? serverCwd);
  let shell: Shell;
  if (options.shell !== undefined) shell = Shell.fromPath(options.shell);
  else {
    const { name, path } = info.shell;
    shell = SHELL_TYPES.includes(name) ? new Shell(name as ShellType, path) : Shell.fromPath(path);
  }
  return common(options, cwd, shell, posix.resolve);
}
