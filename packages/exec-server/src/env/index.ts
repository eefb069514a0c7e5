// Child environment policy (spec §7), shared by the process table, unified-exec and (injected)
// shell-snapshot.

export { childEnv, EXIT_ON_STDIN_CLOSE_ENV_VAR } from './child-env.ts';
export {
  type BaseEnv,
  CORE_ENV_VARS,
  type CreateEnvOptions,
  createEnv,
  DEFAULT_EXCLUDE_PATTERNS,
  isNonInheritableEnvVar,
  NON_INHERITABLE_ENV_VARS,
  removeNonInheritableEnvVars,
} from './create-env.ts';
export { compileEnvPattern, type EnvPattern, matchesAny } from './env-pattern.ts';
