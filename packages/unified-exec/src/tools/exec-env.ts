/** Identity and sandbox facts that decide the variables injected into every command. */
export interface ExecEnvOptions {
  /** Exported as `CODEX_THREAD_ID`. */
  readonly threadId?: string;
  /** Exported as `CODEX_SESSION_ID`. */
  readonly sessionId?: string;
  /** Exported as `CODEX_TOOL_CALL_ID`: the exec_command call that runs the command. */
  readonly toolCallId?: string;
  /** Exported as `CODEX_PERMISSION_PROFILE` when a profile is active. */
  readonly permissionProfile?: string;
  /** Sets `CODEX_APPLY_PATCH_PRESERVE_LINE_ENDINGS=1` (a feature of the original). */
  readonly applyPatchPreserveLineEndings?: boolean;
  /** Sets `CODEX_SANDBOX_NETWORK_DISABLED=1`: the sandbox restricts the network. */
  readonly networkRestricted?: boolean;
  /** Sets `CODEX_SANDBOX=seatbelt`: the command runs under macOS Seatbelt. */
  readonly seatbelt?: boolean;
}

/**
 * The variables every unified-exec child gets, overriding inherited values: no colour, a dumb
 * terminal, UTF-8 locale, `cat` as pager (so nothing waits for a key), `CODEX_CI=1`.
 */
export const UNIFIED_EXEC_ENV: Readonly<Record<string, string>> = Object.freeze({
  NO_COLOR: '1',
  TERM: 'dumb',
  LANG: 'C.UTF-8',
  LC_CTYPE: 'C.UTF-8',
  LC_ALL: 'C.UTF-8',
  COLORTERM: '',
  PAGER: 'cat',
  GIT_PAGER: 'cat',
  GH_PAGER: 'cat',
  CODEX_CI: '1',
});

/** The injected variables for one command (§4.2): the fixed set plus identity and sandbox facts. */
export function unifiedExecEnv(options: ExecEnvOptions = {}): Record<string, string> {
  const env: Record<string, string> = { ...UNIFIED_EXEC_ENV };
  if (options.threadId !== undefined) env.CODEX_THREAD_ID = options.threadId;
  if (options.sessionId !== undefined) env.CODEX_SESSION_ID = options.sessionId;
  if (options.toolCallId !== undefined) env.CODEX_TOOL_CALL_ID = options.toolCallId;
  if (options.permissionProfile !== undefined) env.CODEX_PERMISSION_PROFILE = options.permissionProfile;
  if (options.applyPatchPreserveLineEndings) env.CODEX_APPLY_PATCH_PRESERVE_LINE_ENDINGS = '1';
  if (options.networkRestricted) env.CODEX_SANDBOX_NETWORK_DISABLED = '1';
  if (options.seatbelt) env.CODEX_SANDBOX = 'seatbelt';
  return env;
}

/** `base` with the injected variables applied on top (they win over inherited values). */
export function applyUnifiedExecEnv(
  base: Readonly<Record<string, string>>,
  options: ExecEnvOptions = {},
): Record<string, string> {
  return { ...base, ...unifiedExecEnv(options) };
}
