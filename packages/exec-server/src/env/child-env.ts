import type { ExecParams } from '@execd/protocol';
import { type BaseEnv, createEnv, removeNonInheritableEnvVars } from '@execd/pty-utils';

/**
 * Set by the original's launcher to make an exec-server exit when its stdin closes; a child must
 * never inherit it, or a nested exec-server would die with its parent's pipe.
 */
export const EXIT_ON_STDIN_CLOSE_ENV_VAR = 'CODEX_EXEC_SERVER_EXIT_ON_STDIN_CLOSE';

/**
 * The environment of a `process/start` child (the original's `child_env`): without `envPolicy`
 * the request's `env` is used verbatim; with one, the policy is applied over the executor's own
 * environment (`executorEnv`, usually `process.env`), `env` is overlaid (it wins), and then
 * `CODEX_EXEC_SERVER_EXIT_ON_STDIN_CLOSE` and the non-inheritable names are removed.
 * `defaultExcludes` replaces the default credential patterns (see `CreateEnvOptions`).
 */
export function childEnv(
  params: Pick<ExecParams, 'env' | 'envPolicy'>,
  executorEnv: BaseEnv,
  options: { readonly defaultExcludes?: readonly string[] | undefined } = {},
): Record<string, string> {
  if (params.envPolicy === undefined) return { ...params.env };
  const env = createEnv(params.envPolicy, executorEnv, { defaultExcludes: options.defaultExcludes });
  Object.assign(env, params.env);
  delete env[EXIT_ON_STDIN_CLOSE_ENV_VAR];
  removeNonInheritableEnvVars(env);
  return env;
}
