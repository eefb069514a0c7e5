import { execFile } from 'node:child_process';
import { findTrustedExecutable } from '@execd/pty-utils';

/**
 * The launcher line that makes bubblewrap immune to a terminal's ^C: SIGINT ignored, which
 * survives `exec` (a handled signal would not). In a PTY the command shares bubblewrap's process
 * group, the terminal's foreground group, so the line discipline's SIGINT reaches bubblewrap too;
 * bubblewrap dies of it and kills the command before its trap can run or its status be reported.
 */
export const IGNORE_INTERRUPT_LINE = "trap '' INT";

let probe: Promise<string | undefined> | undefined;

/**
 * GNU `env` from a trusted system folder when it has `--default-signal` (coreutils 8.31+), which
 * puts SIGINT back to its default right before the command inside the sandbox starts (an ignored
 * SIGINT would otherwise be inherited, and a shell cannot trap a signal ignored at its start).
 * Undefined without one; found once per process.
 */
export function interruptResetEnv(): Promise<string | undefined> {
  probe ??= new Promise((resolve) => {
    const env = findTrustedExecutable('env');
    if (env === undefined) {
      resolve(undefined);
      return;
    }
    execFile(env, ['--default-signal=INT', 'true'], { timeout: 5_000 }, (error) =>
      resolve(error === null ? env : undefined),
    );
  });
  return probe;
}

/**
 * The command inside the sandbox prefixed with `env --default-signal=INT --` (see
 * {@link interruptResetEnv}). Undefined when it cannot be: no such `env`, or a program name `env`
 * would take for a variable assignment (it holds `=`).
 */
export function withInterruptReset(env: string, command: readonly string[]): string[] | undefined {
  if (command.length === 0 || command[0]!.includes('=')) return undefined;
  return [env, '--default-signal=INT', '--', ...command];
}
