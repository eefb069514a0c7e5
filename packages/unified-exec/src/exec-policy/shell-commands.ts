import type { ShellScriptParser } from './bash-parser.ts';

// Shells whose `-c` / `-lc` script is parsed (the original's detect_shell_type: bash, zsh, sh).
const PARSED_SHELLS = new Set(['bash', 'zsh', 'sh']);

/** The executable's name as the rules and lists compare it: the last path component. */
export function executableName(raw: string): string {
  const slash = raw.lastIndexOf('/');
  return slash === -1 ? raw : raw.slice(slash + 1);
}

/**
 * The script of a `[shell, '-c' | '-lc', script]` argv for bash, zsh or sh (the original's
 * `extract_bash_command`); undefined for any other shape.
 */
export function shellScript(command: readonly string[]): string | undefined {
  if (command.length !== 3) return undefined;
  const [shell, flag, script] = command as [string, string, string];
  if (flag !== '-c' && flag !== '-lc') return undefined;
  const name = executableName(shell).replace(/\.exe$/i, '');
  return PARSED_SHELLS.has(name) ? script : undefined;
}

/** The plain commands of a shell invocation, when its script is provably plain. */
export function shellPlainCommands(
  parser: ShellScriptParser,
  command: readonly string[],
): string[][] | undefined {
  const script = shellScript(command);
  return script === undefined ? undefined : parser.plainCommands(script);
}

/** The commands the exec policy judges, and how they were found. */
export interface PolicyCommands {
  readonly commands: string[][];
  /** True when only the here-doc fallback understood the script (no amendment is proposed). */
  readonly usedComplexParsing: boolean;
}

/**
 * What the exec policy evaluates for an argv (the original's `commands_for_exec_policy`): each
 * simple command of a plain `bash -lc` script; else the one command of a here-doc script; else
 * the whole argv as given (so `bash -lc '<anything>'` is judged as that three-word command).
 */
export function commandsForExecPolicy(parser: ShellScriptParser, command: readonly string[]): PolicyCommands {
  const plain = shellPlainCommands(parser, command);
  if (plain !== undefined && plain.length > 0) return { commands: plain, usedComplexParsing: false };
  const script = shellScript(command);
  const heredoc = script === undefined ? undefined : parser.heredocCommand(script);
  if (heredoc !== undefined) return { commands: [heredoc], usedComplexParsing: true };
  return { commands: [[...command]], usedComplexParsing: false };
}

/** The first word of the canonical form of a shell script that is not one plain command. */
export const CANONICAL_SHELL_SCRIPT_PREFIX = '__codex_shell_script__';

/**
 * The argv as the session's approval cache compares it (the original's
 * `canonicalize_command_for_approval`): the one plain command of a `bash -lc` script; else, for a
 * shell script, the marker, the flag and the script; else the argv as given.
 */
export function canonicalCommandForApproval(parser: ShellScriptParser, command: readonly string[]): string[] {
  const plain = shellPlainCommands(parser, command);
  if (plain !== undefined && plain.length === 1) return plain[0] as string[];
  const script = shellScript(command);
  if (script !== undefined) return [CANONICAL_SHELL_SCRIPT_PREFIX, command[1] as string, script];
  return [...command];
}
