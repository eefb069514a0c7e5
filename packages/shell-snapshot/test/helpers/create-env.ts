// A test-only spec §7 `create_env`: the real one lives in @execd/exec-server, which this package
// must not import (imports go one way). Kept deliberately small and obvious.
import type { ExecEnvPolicy } from '@execd/protocol';
import { DEFAULT_EXCLUDE_PATTERNS } from '../../src/credential-env-names.ts';

const CORE = new Set([
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
]);

function matches(pattern: string, name: string): boolean {
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replaceAll('*', '.*')
    .replaceAll('?', '.');
  return new RegExp(`^${source}$`, 'i').test(name);
}

export function createEnv(
  policy: ExecEnvPolicy,
  base: Readonly<Record<string, string>>,
): Record<string, string> {
  const env: Record<string, string> = {};
  if (policy.inherit !== 'none') {
    for (const [name, value] of Object.entries(base)) {
      if (policy.inherit === 'core' && !CORE.has(name.toUpperCase())) continue;
      env[name] = value;
    }
  }
  const drop = [...(policy.ignoreDefaultExcludes ? [] : DEFAULT_EXCLUDE_PATTERNS), ...policy.exclude];
  for (const name of Object.keys(env)) if (drop.some((pattern) => matches(pattern, name))) delete env[name];
  Object.assign(env, policy.set);
  if (policy.includeOnly.length > 0) {
    for (const name of Object.keys(env)) {
      if (!policy.includeOnly.some((pattern) => matches(pattern, name))) delete env[name];
    }
  }
  return env;
}
