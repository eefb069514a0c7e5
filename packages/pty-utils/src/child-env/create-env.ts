import type { ExecEnvPolicy } from '@execd/protocol';
import {
  DEFAULT_EXCLUDE_PATTERNS,
  isDefaultExcludeException,
  isNonInheritableEnvVar,
} from './credential-env-names.ts';
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

/** A base environment as Node exposes it (`process.env`): undefined values are skipped. */
export type BaseEnv = Readonly<Record<string, string | undefined>>;

/** Extra inputs of `createEnv`. */
export interface CreateEnvOptions {
  /** When given, exported as `CODEX_THREAD_ID` (after `includeOnly`, as the original). */
  readonly threadId?: string | undefined;
  /**
   * The patterns removed unless the policy sets `ignoreDefaultExcludes` (default
   * {@link DEFAULT_EXCLUDE_PATTERNS}). Replaces the list: extend it with
   * `[...DEFAULT_EXCLUDE_PATTERNS, 'MORE_*']`; `[]` turns the defaults off for every policy.
   */
  readonly defaultExcludes?: readonly string[] | undefined;
}

const CORE_NAMES = new Set(CORE_ENV_VARS.map((name) => name.toUpperCase()));
const DEFAULT_EXCLUDES = DEFAULT_EXCLUDE_PATTERNS.map(compileEnvPattern);

/** Deletes every non-inheritable name from `env` in place. */
export function removeNonInheritableEnvVars(env: Record<string, string>): void {
  for (const name of Object.keys(env)) {
    if (isNonInheritableEnvVar(name)) delete env[name];
  }
}

/**
 * Builds a child environment from `baseEnv` under `policy` (spec §7 `populate_env`), in order:
 * inherit all/core/none; drop the default credential patterns (`options.defaultExcludes`, else
 * {@link DEFAULT_EXCLUDE_PATTERNS}) unless `ignoreDefaultExcludes`, but keep the non-secret
 * names they would catch (`DEFAULT_EXCLUDE_EXCEPTIONS`: git identity, ssh agent socket, …);
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
  if (!policy.ignoreDefaultExcludes) {
    const defaults = options.defaultExcludes;
    removeMatching(
      env,
      defaults === undefined ? DEFAULT_EXCLUDES : defaults.map(compileEnvPattern),
      isDefaultExcludeException,
    );
  }
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

function removeMatching(
  env: Record<string, string>,
  patterns: readonly EnvPattern[],
  keep: (name: string) => boolean = () => false,
): void {
  if (patterns.length === 0) return;
  for (const name of Object.keys(env)) {
    if (matchesAny(patterns, name) && !keep(name)) delete env[name];
  }
}
