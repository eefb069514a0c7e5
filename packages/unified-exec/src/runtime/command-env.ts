import type { ExecEnvPolicy } from '@execd/protocol';
import { type BaseEnv, createEnv, isNonInheritableEnvVar } from '@execd/pty-utils';
import { applyUnifiedExecEnv, type ExecEnvOptions } from '../tools/exec-env.ts';

/**
 * Variables owned by the runtime, never by the user's policy: an exec-server gets them only
 * through the overlay (its policy excludes them, and `set` cannot forge them).
 */
export const RUNTIME_ENV_VARS: readonly string[] = [
  'CODEX_PERMISSION_PROFILE',
  'CODEX_VERSION',
  'CODEX_APPLY_PATCH_PRESERVE_LINE_ENDINGS',
  'CODEX_PLUGIN_METRICS_OUTPUT',
];

/** A runtime output channel that must not leak into a child (the original's `strip_output_env`). */
const OUTPUT_ENV_VAR = 'CODEX_PLUGIN_METRICS_OUTPUT';

const RUNTIME_NAMES = new Set(RUNTIME_ENV_VARS.map((name) => name.toUpperCase()));

/** The environment of one command, in both launch forms. */
export interface CommandEnv {
  /** The child's whole environment, for a direct local spawn. */
  readonly env: Record<string, string>;
  /** The policy an exec-server applies over its own environment. */
  readonly execServerPolicy: ExecEnvPolicy;
  /** What the exec-server overlays on that: only what differs from the local policy result. */
  readonly execServerOverlay: Record<string, string>;
}

/** Options of {@link buildCommandEnv}. */
export interface CommandEnvOptions extends ExecEnvOptions {
  /** The environment the policy starts from (default `process.env`). */
  readonly baseEnv?: BaseEnv | undefined;
}

/**
 * Builds a command's environment (spec §4.2, §7): the policy over the base environment, the
 * thread/session ids and the fixed unified-exec variables on top; and for an exec-server the
 * policy with runtime variables excluded plus an overlay of the values that differ from what the
 * policy alone gives here (runtime variables always travel; non-inheritable ones never do).
 */
export function buildCommandEnv(policy: ExecEnvPolicy, options: CommandEnvOptions = {}): CommandEnv {
  const localPolicyEnv = createEnv(policy, options.baseEnv ?? process.env);
  const env = applyUnifiedExecEnv(localPolicyEnv, options);
  delete env[OUTPUT_ENV_VAR];

  const set: Record<string, string> = {};
  for (const [name, value] of Object.entries(policy.set)) {
    if (!RUNTIME_NAMES.has(name.toUpperCase()) && !isNonInheritableEnvVar(name)) set[name] = value;
  }
  const execServerPolicy: ExecEnvPolicy = {
    ...policy,
    exclude: [...policy.exclude, ...RUNTIME_ENV_VARS],
    set,
  };
  const execServerOverlay: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (isNonInheritableEnvVar(name)) continue;
    if (RUNTIME_NAMES.has(name.toUpperCase()) || localPolicyEnv[name] !== value)
      execServerOverlay[name] = value;
  }
  return { env, execServerPolicy, execServerOverlay };
}
