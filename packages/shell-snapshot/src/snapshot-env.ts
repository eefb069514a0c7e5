import type { ExecEnvPolicy } from '@execd/protocol';
import { createEnv, isNonInheritableEnvVar } from '@execd/pty-utils';

/**
 * Builds an environment from `baseEnv` under `policy` (spec §7 `create_env`); `@execd/pty-utils`
 * `createEnv` fits this type.
 */
export type CreateEnv = (
  policy: ExecEnvPolicy,
  baseEnv: Readonly<Record<string, string>>,
) => Record<string, string>;

/** Present in an environment prepared for the managed network proxy (as the original). */
export const PROXY_ACTIVE_ENV_VAR = 'CODEX_NETWORK_PROXY_ACTIVE';

/**
 * Variables the managed network proxy sets for a command (the original's `PROXY_ENV_KEYS`, minus
 * platform-specific ones). A snapshot captured under the proxy must not pin one launch's proxy
 * port into every later command, so they are dropped when `CODEX_NETWORK_PROXY_ACTIVE` is present.
 */
export const MANAGED_PROXY_ENV_VARS: readonly string[] = [
  PROXY_ACTIVE_ENV_VAR,
  'CODEX_NETWORK_ALLOW_LOCAL_BINDING',
  'ELECTRON_GET_USE_PROXY',
  'NODE_USE_ENV_PROXY',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'http_proxy',
  'https_proxy',
  'YARN_HTTP_PROXY',
  'YARN_HTTPS_PROXY',
  'npm_config_http_proxy',
  'npm_config_https_proxy',
  'npm_config_proxy',
  'NPM_CONFIG_HTTP_PROXY',
  'NPM_CONFIG_HTTPS_PROXY',
  'NPM_CONFIG_PROXY',
  'BUNDLE_HTTP_PROXY',
  'BUNDLE_HTTPS_PROXY',
  'PIP_PROXY',
  'DOCKER_HTTP_PROXY',
  'DOCKER_HTTPS_PROXY',
  'WS_PROXY',
  'WSS_PROXY',
  'ws_proxy',
  'wss_proxy',
  'NO_PROXY',
  'no_proxy',
  'npm_config_noproxy',
  'NPM_CONFIG_NOPROXY',
  'YARN_NO_PROXY',
  'BUNDLE_NO_PROXY',
  'ALL_PROXY',
  'all_proxy',
  'FTP_PROXY',
  'ftp_proxy',
];

/**
 * Never taken from a snapshot: the working directory belongs to the launch (`PWD`, `OLDPWD`, as
 * the original), and `SHLVL`/`_` are maintained by the shell itself (the capture shell's `SHLVL`
 * would make every restored command one level too deep).
 */
export const SHELL_OWNED_ENV_VARS: readonly string[] = ['PWD', 'OLDPWD', 'SHLVL', '_'];

/** How a captured environment is filtered (`filterSnapshotEnv`). */
export interface SnapshotEnvOptions {
  /** The request's policy; applied with `inherit` forced to `all`. Absent = no policy filtering. */
  readonly policy?: ExecEnvPolicy | undefined;
  /**
   * The credential patterns the policy drops unless it sets `ignoreDefaultExcludes` (default
   * `DEFAULT_EXCLUDE_PATTERNS`; `createEnv`'s `defaultExcludes`): a server's own list.
   */
  readonly defaultExcludes?: readonly string[] | undefined;
  /**
   * Replaces the env-policy implementation (default: `@execd/pty-utils` `createEnv` with
   * `defaultExcludes`). Kept for the integration tests, which pass `createEnv` itself.
   */
  readonly createEnv?: CreateEnv | undefined;
}

const MANAGED_PROXY_NAMES = new Set(MANAGED_PROXY_ENV_VARS);

/**
 * The environment a snapshot carries, from what the capture exported, in the original's order:
 * drop managed proxy variables when the proxy was active; apply the policy with `inherit: all`
 * (the default excludes, `DEFAULT_EXCLUDE_PATTERNS`, unless ignored; `exclude`, `set`, `includeOnly`);
 * drop the shell-owned names and the non-inheritable ones. Returns a fresh object.
 */
export function filterSnapshotEnv(
  captured: ReadonlyMap<string, string>,
  options: SnapshotEnvOptions = {},
): Record<string, string> {
  let env: Record<string, string> = {};
  for (const [name, value] of captured) {
    // A plain object would turn this name into a prototype change instead of a key.
    if (name !== '__proto__') env[name] = value;
  }
  if (Object.hasOwn(env, PROXY_ACTIVE_ENV_VAR)) {
    for (const name of Object.keys(env)) if (MANAGED_PROXY_NAMES.has(name)) delete env[name];
  }
  if (options.policy !== undefined) {
    const policy: ExecEnvPolicy = { ...options.policy, inherit: 'all' };
    env =
      options.createEnv === undefined
        ? createEnv(policy, env, { defaultExcludes: options.defaultExcludes })
        : options.createEnv(policy, env);
  }
  for (const name of SHELL_OWNED_ENV_VARS) delete env[name];
  for (const name of Object.keys(env)) if (isNonInheritableEnvVar(name)) delete env[name];
  return env;
}
