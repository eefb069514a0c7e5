import type { ToolCallResult } from '@execd/unified-exec';
import type { CliSession } from './cli-session.ts';

/** What {@link runToEnd} needs besides the session. */
export interface RunToEndOptions {
  readonly command: string;
  readonly tty: boolean;
  /** Each tool call's wait (the exec_command yield, then each poll's). */
  readonly yieldTimeMs: number | undefined;
  /** Stop the command after this many seconds. */
  readonly timeoutSeconds: number | undefined;
  /** Prints one tool result. */
  readonly print: (result: ToolCallResult) => void;
  /** Aborted when the person interrupts (Ctrl-C): stop polling, print nothing more. */
  readonly cancelSignal: AbortSignal;
}

/** How `uexec run` ended. */
export type RunOutcome =
  | { readonly kind: 'exited'; readonly exitCode: number }
  | { readonly kind: 'failed' }
  | { readonly kind: 'timedOut' }
  | { readonly kind: 'interrupted' };

/**
 * The wait of each exec_command / write_stdin call when none is given: as the tools' default,
 * so the first result reads as a model's would, and a long command prints every 10 s.
 */
const DEFAULT_CALL_YIELD_MS = 10_000;

/** A shell exit status (0..255); anything else (a signal's -1) reads as a failure. */
function exitStatus(code: number): number {
  return code >= 0 && code <= 255 ? code : 1;
}

/**
 * Runs one command to its end: exec_command, then empty write_stdin polls while it runs, each
 * result printed as it comes. A timeout terminates the command; an interruption stops printing
 * (the caller reaps the session).
 */
export async function runToEnd(session: CliSession, options: RunToEndOptions): Promise<RunOutcome> {
  const { tools, manager } = session;
  const callYieldMs = options.yieldTimeMs ?? DEFAULT_CALL_YIELD_MS;
  const deadline =
    options.timeoutSeconds === undefined ? undefined : performance.now() + options.timeoutSeconds * 1000;
  const remainingMs = (): number => (deadline === undefined ? Infinity : deadline - performance.now());
  let processId: number | undefined;
  let timedOut = false;
  const timer =
    deadline === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          if (processId !== undefined) void manager.terminateProcess(processId);
        }, remainingMs());
  try {
    const first = await tools.execCommand({
      cmd: options.command,
      tty: options.tty,
      // The first call returns by the deadline, so the timeout knows which process to stop.
      yield_time_ms: Math.max(0, Math.min(callYieldMs, Math.ceil(remainingMs()))),
    });
    if (options.cancelSignal.aborted) return { kind: 'interrupted' };
    options.print(first);
    let output = first.output;
    if (!first.success || output === undefined) return { kind: 'failed' };
    processId = output.processId;
    while (output.exitCode === undefined && output.processId !== undefined) {
      if (timedOut) {
        await manager.terminateProcess(output.processId);
        return { kind: 'timedOut' };
      }
      const polled = await tools.writeStdin({
        session_id: output.processId,
        chars: '',
        yield_time_ms: Math.max(0, Math.min(callYieldMs, Math.ceil(remainingMs()))),
      });
      if (options.cancelSignal.aborted) return { kind: 'interrupted' };
      if (timedOut) {
        // What the command printed before it was stopped; not the error of a vanished process.
        if (polled.success) options.print(polled);
        return { kind: 'timedOut' };
      }
      options.print(polled);
      if (!polled.success || polled.output === undefined) return { kind: 'failed' };
      output = polled.output;
    }
    if (output.exitCode === undefined) return { kind: 'failed' };
    return { kind: 'exited', exitCode: exitStatus(output.exitCode) };
  } finally {
    clearTimeout(timer);
  }
}
