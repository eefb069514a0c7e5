import type { ShellScriptParser } from './bash-parser.ts';
import { executableName, shellPlainCommands, shellScript } from './shell-commands.ts';

// Read-only tools that are safe with any arguments (the original's list, Linux build).
const ALWAYS_SAFE = new Set([
  'cat',
  'cd',
  'cut',
  'echo',
  'expr',
  'false',
  'grep',
  'head',
  'id',
  'ls',
  'nl',
  'paste',
  'pwd',
  'rev',
  'seq',
  'stat',
  'tail',
  'tr',
  'true',
  'uname',
  'uniq',
  'wc',
  'which',
  'whoami',
  // Linux only in the original.
  'numfmt',
  'tac',
]);

// `find` options that run commands, delete files or write files.
const UNSAFE_FIND_OPTIONS = new Set([
  '-exec',
  '-execdir',
  '-ok',
  '-okdir',
  '-delete',
  '-fls',
  '-fprint',
  '-fprint0',
  '-fprintf',
]);
// ripgrep options that run another program.
const UNSAFE_RG_OPTIONS_WITH_ARGS = ['--pre', '--hostname-bin'];
const UNSAFE_RG_OPTIONS = new Set(['--search-zip', '-z']);

/** `N p` or `M,N p` (digits only), the one `sed -n` script the safe list accepts. */
const SED_PRINT_RANGE = /^(\d+,)?\d+p$/;

/**
 * Whether one argv is on the original's known-safe list (`is_safe_to_call_with_exec`): read-only
 * tools, `find` / `rg` / `base64` without their writing or executing options, `sed -n Np`.
 */
export function isSafeToCallWithExec(command: readonly string[]): boolean {
  const first = command[0];
  if (first === undefined) return false;
  const name = executableName(first);
  const args = command.slice(1);
  if (ALWAYS_SAFE.has(name)) return true;
  switch (name) {
    case 'base64':
      return !args.some(
        (arg) => arg === '-o' || arg === '--output' || arg.startsWith('--output=') || arg.startsWith('-o'),
      );
    case 'find':
      return !command.some((arg) => UNSAFE_FIND_OPTIONS.has(arg));
    case 'rg':
      return !command.some(
        (arg) =>
          UNSAFE_RG_OPTIONS.has(arg) ||
          UNSAFE_RG_OPTIONS_WITH_ARGS.some((option) => arg === option || arg.startsWith(`${option}=`)),
      );
    case 'sed':
      return command.length <= 4 && command[1] === '-n' && SED_PRINT_RANGE.test(command[2] ?? '');
    default:
      return false;
  }
}

/**
 * Whether an argv is known safe (the original's `is_known_safe_command`): the argv itself, or a
 * `bash|zsh|sh -c|-lc` script whose every plain command is (`zsh` counts as `bash`).
 */
export function isKnownSafeCommand(parser: ShellScriptParser, command: readonly string[]): boolean {
  const normalized = command.map((word) => (word === 'zsh' ? 'bash' : word));
  if (isSafeToCallWithExec(normalized)) return true;
  const commands = shellPlainCommands(parser, normalized);
  return commands !== undefined && commands.length > 0 && commands.every(isSafeToCallWithExec);
}

/** Which dangerous-command rule an argv matched. */
export type DangerousCommandMatch = 'forcedRm' | 'other';

function dangerousForExec(command: readonly string[]): DangerousCommandMatch | undefined {
  const first = command[0];
  if (first === undefined) return undefined;
  const name = executableName(first);
  if (name === 'sudo') return dangerousForExec(command.slice(1));
  if (name === 'rm' && rmForces(command.slice(1))) return 'forcedRm';
  return undefined;
}

function rmForces(args: readonly string[]): boolean {
  for (const arg of args) {
    if (arg === '--') return false;
    if (arg === '--force') return true;
    if (arg.startsWith('-') && !arg.startsWith('--') && arg.includes('f')) return true;
  }
  return false;
}

/**
 * Whether an argv might be dangerous (the original's `dangerous_command_match`): a forced `rm`
 * (also behind `sudo`), directly or as any literal command anywhere in a shell script.
 */
export function dangerousCommandMatch(
  parser: ShellScriptParser,
  command: readonly string[],
): DangerousCommandMatch | undefined {
  const direct = dangerousForExec(command);
  if (direct !== undefined) return direct;
  const script = shellScript(command);
  if (script === undefined) return undefined;
  for (const inner of parser.literalCommands(script) ?? []) {
    const match = dangerousForExec(inner);
    if (match !== undefined) return match;
  }
  return undefined;
}
