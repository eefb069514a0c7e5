import type { ExecEnvPolicy } from '@execd/protocol';
import { compileEnvPattern, type EnvPattern, matchesAny } from './env-pattern.ts';

/**
 * Names kept by `inherit: "core"` (compared case-insensitively): the variables a shell needs to
 * find programs, a home and a locale, and nothing that identifies a service or carries a secret.
 */
export const CORE_ENV_VARS: readonly string[] = [
  'PATH',
  'SHELL',
  'TMPDIR',
  'TEMP',
  'TMP',
  'HOME',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'LOGNAME',
  'USER',
];

/**
 * Patterns removed unless `ignoreDefaultExcludes` is set: the usual shapes of credential names
 * (`OPENAI_API_KEY`, `AWS_SECRET_ACCESS_KEY`, `GITHUB_TOKEN`), so a child never sees them by default.
 */
export const DEFAULT_EXCLUDE_PATTERNS: readonly string[] = ['*KEY*', '*SECRET*', '*TOKEN*'];

/**
 * Names never passed to a child, whatever the policy says (case-insensitive): credentials of the
 * executor itself that a command must not be able to reuse.
 */
export const NON_INHERITABLE_ENV_VARS: readonly string[] = [
  'CODEX_EXEC_SERVER_NOISE_AUTH_TOKEN',
  'NODE_REPL_AUTH_TOKEN',
  'OPENAI_FEDERATION_RULE_ID',
  'OPENAI_IDENTITY_TOKEN_FILE',
  'OPENAI_WORKLOAD_IDENTITY_CONTEXT',
];

/** A base environment as Node exposes it (`process.env`): undefined values are skipped. */
export type BaseEnv = Readonly<Record<string, string | undefined>>;

/** Extra inputs of `createEnv`. */
export interface CreateEnvOptions {
  /** When given, exported as `CODEX_THREAD_ID` (after `includeOnly`, as the original). */
  readonly threadId?: string | undefined;
}

const CORE_NAMES = new Set(CORE_ENV_VARS.map((name) => name.toUpperCase()));
const NON_INHERITABLE_NAMES = new Set(NON_INHERITABLE_ENV_VARS.map((name) => name.toUpperCase()));
const DEFAULT_EXCLUDES = DEFAULT_EXCLUDE_PATTERNS.map(compileEnvPattern);

/** True when `name` must never reach a child (case-insensitive). */
export function isNonInheritableEnvVar(name: string): boolean {
  return NON_INHERITABLE_NAMES.has(name.toUpperCase());
}

/** Deletes every non-inheritable name from `env` in place. */
export function removeNonInheritableEnvVars(env: Record<string, string>): void {
  for (const name of Object.keys(env)) {
    if (isNonInheritableEnvVar(name)) delete env[name];
  }
}

/**
 * Builds a child environment from `baseEnv` under `policy` (spec §7 `populate_env`), in order:
 * inherit all/core/none; drop the default credential patterns unless `ignoreDefaultExcludes`;
 * drop `exclude` matches; apply `set`; keep only `includeOnly` matches when it is non-empty (this
 * also filters `set` values); add `CODEX_THREAD_ID`; drop non-inheritable names.
 * Patterns are case-insensitive `*`/`?` wildcards. Returns a fresh object.
 */
export function createEnv(
  policy: ExecEnvPolicy,
  baseEnv: BaseEnv,
  options: CreateEnvOptions = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  if (policy.inherit !== 'none') {
    for (const [name, value] of Object.entries(baseEnv)) {
      if (value === undefined) continue;
      if (policy.inherit === 'core' && !CORE_NAMES.has(name.toUpperCase())) continue;
      env[name] = value;
    }
  }
  if (!policy.ignoreDefaultExcludes) removeMatching(env, DEFAULT_EXCLUDES);
  removeMatching(env, policy.exclude.map(compileEnvPattern));
  Object.assign(env, policy.set);
  if (policy.includeOnly.length > 0) {
    const keep = policy.includeOnly.map(compileEnvPattern);
    for (const name of Object.keys(env)) {
      if (!matchesAny(keep, name)) delete env[name];
    }
  }
  if (options.threadId !== undefined) env.CODEX_THREAD_ID = options.threadId;
  removeNonInheritableEnvVars(env);
  return env;
}

function removeMatching(env: Record<string, string>, patterns: readonly EnvPattern[]): void {
  if (patterns.length === 0) return;
  for (const name of Object.keys(env)) {
    if (matchesAny(patterns, name)) delete env[name];
  }
}
