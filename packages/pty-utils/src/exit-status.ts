import { constants } from 'node:os';
import type { ExitStatus } from './types.ts';

const SIGNAL_NUMBERS: Readonly<Record<string, number>> = constants.signals;
const SIGNAL_NAMES: ReadonlyMap<number, NodeJS.Signals> = new Map(
  Object.entries(constants.signals).map(([name, num]) => [num, name as NodeJS.Signals]),
);

/** The number of a signal given by name or number; undefined for an unknown name. */
export function signalNumber(signal: NodeJS.Signals | number): number | undefined {
  return typeof signal === 'number' ? signal : SIGNAL_NUMBERS[signal];
}

/** The name of a signal number (`9` -> `SIGKILL`); undefined when this platform has no such signal. */
export function signalName(signal: number): NodeJS.Signals | undefined {
  return SIGNAL_NAMES.get(signal);
}

/**
 * Maps a wait status to the exit code every layer reports (the original's `exit_code_from_status`):
 * a normal exit is its code; death by signal N is `128 + N` (SIGINT 130, SIGKILL 137); anything
 * else is -1. A signal wins over a code when both are given.
 */
export function exitCodeFromStatus(
  code: number | null | undefined,
  signal: NodeJS.Signals | number | null | undefined,
): number {
  if (signal !== null && signal !== undefined && signal !== 0) {
    const num = signalNumber(signal);
    return num === undefined ? -1 : 128 + num;
  }
  return typeof code === 'number' && Number.isInteger(code) ? code : -1;
}

/**
 * The exit code of a PTY child as the original reports it: its PTY backend (portable-pty) turns
 * a death by signal into exit code 1, so a tty `sleep 30` stopped by `^C`, `process/signal` or
 * `process/terminate` exits 1 on the wire (pipes report `128 + N`; live 0.169.0). A normal exit is
 * its code, anything else -1.
 */
export function ptyExitCodeFromStatus(
  code: number | null | undefined,
  signal: NodeJS.Signals | number | null | undefined,
): number {
  if (signal !== null && signal !== undefined && signal !== 0) return 1;
  return typeof code === 'number' && Number.isInteger(code) ? code : -1;
}

/** {@link toExitStatus} for a PTY child: the signal is kept, the code is {@link ptyExitCodeFromStatus}'s. */
export function toPtyExitStatus(
  code: number | null | undefined,
  signal: NodeJS.Signals | number | null | undefined,
): ExitStatus {
  return { ...toExitStatus(code, signal), exitCode: ptyExitCodeFromStatus(code, signal) };
}

/** Builds an `ExitStatus` from what `waitpid` reported (code and/or signal, by name or number). */
export function toExitStatus(
  code: number | null | undefined,
  signal: NodeJS.Signals | number | null | undefined,
): ExitStatus {
  const name =
    typeof signal === 'number' ? (signal === 0 ? null : (signalName(signal) ?? null)) : (signal ?? null);
  return { exitCode: exitCodeFromStatus(code, signal), signal: name };
}
