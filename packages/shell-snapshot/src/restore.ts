import { isNonInheritableEnvVar } from '@execd/pty-utils';
import { MAX_SNAPSHOT_ENV_VALUE_BYTES } from './limits.ts';
import { RESTORE_FLAG, RESTORE_STARTUP, type SnapshotShell } from './shell-kind.ts';

/** Prefix of the environment variables that carry the state to the restored shell, as the original. */
export const SNAPSHOT_STATE_ENV_PREFIX = '__CODEX_SHELL_SNAPSHOT_STATE_';

/** Written to stderr by the restored shell when evaluating the state fails (the original's text). */
export const RESTORE_FAILED_MESSAGE = 'failed to restore shell snapshot';

/** A captured snapshot: the state script and the filtered environment. Immutable, shareable. */
export interface ShellSnapshot {
  readonly shell: SnapshotShell;
  /** Options, aliases and functions as a script, starting with `# Snapshot file`. */
  readonly state: string;
  /** Exported variables of the profile, already filtered (`filterSnapshotEnv`). */
  readonly env: Readonly<Record<string, string>>;
}

/** A command ready to spawn (after any sandbox wrapping); the capture and the restore both use one. */
export interface LaunchCommand {
  /** Full argv, ending with the request's `[shell, "-lc", script, …]`. */
  readonly argv: readonly string[];
  /** Absolute native working directory. */
  readonly cwd: string;
  /** The child's entire environment. */
  readonly env: Readonly<Record<string, string>>;
  /** What the child sees as `argv[0]`, when overridden. */
  readonly arg0?: string | undefined;
}

/** Inputs of `restoreCommand` besides the snapshot. */
export interface RestoreOptions {
  /** The launch to rewrite. */
  readonly command: LaunchCommand;
  /** Index in `command.argv` of the shell path (followed by `-lc` and the script). */
  readonly shellStart: number;
  /** The request's own `env` overlay: these names win over the snapshot's values. */
  readonly requestEnv: Readonly<Record<string, string>>;
}

/**
 * Splits `state` into pieces of at most `maxBytes` UTF-8 bytes, never inside a character (a 🦀
 * is never cut in half). Concatenating the pieces gives back `state`.
 */
export function splitState(state: string, maxBytes: number = MAX_SNAPSHOT_ENV_VALUE_BYTES): string[] {
  const bytes = Buffer.from(state, 'utf8');
  const pieces: string[] = [];
  let start = 0;
  while (start < bytes.length) {
    let end = Math.min(start + maxBytes, bytes.length);
    // Back up over UTF-8 continuation bytes (10xxxxxx) so the cut lands on a character start.
    while (end < bytes.length && end > start && isContinuation(bytes[end])) end--;
    if (end === start) {
      // maxBytes is smaller than this character: take the whole character anyway.
      end = start + 1;
      while (end < bytes.length && isContinuation(bytes[end])) end++;
    }
    pieces.push(bytes.toString('utf8', start, end));
    start = end;
  }
  return pieces;
}

function isContinuation(byte: number | undefined): boolean {
  return ((byte ?? 0) & 0xc0) === 0x80;
}

/**
 * Rewrites a `[shell, "-lc", script, …]` launch to restore `snapshot` instead of running the
 * login files (spec §6.2): env = launch env, then the snapshot's, then the request's own values;
 * the state travels in `__CODEX_SHELL_SNAPSHOT_STATE_i` variables that the shell evaluates and
 * unsets before the script; `-lc` becomes `-pc` (bash), `-fc` (zsh) or `-c` (sh). Pure.
 */
export function restoreCommand(snapshot: ShellSnapshot, options: RestoreOptions): LaunchCommand {
  const { command, shellStart, requestEnv } = options;
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(command.env)) {
    // A stale or forged state variable must not reach the command.
    if (!name.startsWith(SNAPSHOT_STATE_ENV_PREFIX)) env[name] = value;
  }
  Object.assign(env, snapshot.env);
  for (const name of Object.keys(requestEnv)) {
    // The launch env holds the request's values after the policy; when it dropped one on purpose,
    // the name stays dropped (the original would reinstate the raw request value).
    if (Object.hasOwn(command.env, name)) env[name] = command.env[name] as string;
    else delete env[name];
  }
  for (const name of Object.keys(env)) if (isNonInheritableEnvVar(name)) delete env[name];

  const names = splitState(snapshot.state).map((piece, index) => {
    const name = `${SNAPSHOT_STATE_ENV_PREFIX}${index}`;
    env[name] = piece;
    return name;
  });
  const expansion = names.map((name) => `\${${name}}`).join('');
  const script = command.argv[shellStart + 2] ?? '';
  const prologue =
    `${RESTORE_STARTUP[snapshot.shell]}if ! eval "unset ${names.join(' ')}\n${expansion}" >/dev/null; ` +
    `then printf '${RESTORE_FAILED_MESSAGE}\\n' >&2; fi\n`;
  const argv = [...command.argv];
  argv[shellStart + 1] = RESTORE_FLAG[snapshot.shell];
  argv[shellStart + 2] = prologue + script;
  return { ...command, argv, env };
}

/**
 * Script lines that put `pathPrepends` in front of PATH. Prepend them to the command's script
 * (before it reaches the executor) so they run after the restore and win over the profile's PATH.
 */
export function pathExportsAfterRestore(pathPrepends: readonly string[]): string {
  if (pathPrepends.length === 0) return '';
  return `PATH=${shellQuote(pathPrepends.join(':'))}"\${PATH:+:$PATH}"; export PATH\n`;
}

/** Quotes `text` as one POSIX shell word. */
export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}
