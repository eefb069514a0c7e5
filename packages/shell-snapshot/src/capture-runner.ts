import { spawn } from 'node:child_process';
import { MAX_SNAPSHOT_BYTES, SNAPSHOT_DRAIN_AFTER_EXIT_MS, SNAPSHOT_TIMEOUT_MS } from './limits.ts';
import type { LaunchCommand } from './restore.ts';

/** Why a capture produced no snapshot. */
export type CaptureFailureReason =
  | 'spawnFailed'
  | 'timeout'
  | 'tooLarge'
  | 'nonZeroExit'
  | 'aborted'
  | 'invalidOutput'
  | 'runnerFailed';

/** The result of running a capture command: its stdout, or why there is none. */
export type CaptureRun =
  | { readonly ok: true; readonly stdout: Uint8Array }
  | { readonly ok: false; readonly reason: CaptureFailureReason; readonly detail: string };

/** Limits a capture runner must enforce. */
export interface CaptureLimits {
  /** Kill the capture (its whole process group) after this long. */
  readonly timeoutMs: number;
  /** Kill the capture once its stdout exceeds this many bytes. */
  readonly maxOutputBytes: number;
  /** Aborted when the cache closes: kill the capture and report `aborted`. */
  readonly cancelSignal?: AbortSignal | undefined;
}

/**
 * Runs a capture command and collects its stdout. The default is `runCaptureCommand`; inject
 * another to capture somewhere else, e.g. wrap `command.argv` in the same sandbox as the launch.
 */
export type CaptureRunner = (command: LaunchCommand, limits: CaptureLimits) => Promise<CaptureRun>;

/** The limits of the original: 512 KiB of output, 10 s. */
export const DEFAULT_CAPTURE_LIMITS: CaptureLimits = Object.freeze({
  timeoutMs: SNAPSHOT_TIMEOUT_MS,
  maxOutputBytes: MAX_SNAPSHOT_BYTES,
});

/**
 * Runs `command` with `node:child_process`: stdin /dev/null, stderr discarded, stdout collected up
 * to `maxOutputBytes`, in its own session and process group (the whole group is SIGKILLed on
 * timeout, overflow or abort). A non-zero exit or a signal is a failure. Never rejects.
 */
export function runCaptureCommand(command: LaunchCommand, limits: CaptureLimits): Promise<CaptureRun> {
  const [file, ...args] = command.argv;
  if (file === undefined) return Promise.resolve(failure('spawnFailed', 'empty capture argv'));
  if (limits.cancelSignal?.aborted) return Promise.resolve(failure('aborted', 'capture cancelled'));
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    let drainTimer: NodeJS.Timeout | undefined;
    const child = spawn(file, args, {
      cwd: command.cwd,
      env: command.env,
      stdio: ['ignore', 'pipe', 'ignore'],
      detached: true, // setsid(): its own process group, so a kill reaches the profile's children too
      ...(command.arg0 === undefined ? {} : { argv0: command.arg0 }),
    });
    const killGroup = (): void => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // ESRCH: the group is already gone.
      }
    };
    const exited = (): boolean =>
      child.pid === undefined || child.exitCode !== null || child.signalCode !== null;
    const finish = (result: CaptureRun, kill: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(drainTimer);
      limits.cancelSignal?.removeEventListener('abort', onAbort);
      if (kill) killGroup();
      child.stdout?.destroy();
      // Resolve once the shell is reaped, so a closed cache leaves no capture process behind.
      if (exited()) resolve(result);
      else child.once('exit', () => resolve(result));
    };
    const onAbort = (): void => finish(failure('aborted', 'capture cancelled'), true);
    const timer = setTimeout(
      () => finish(failure('timeout', `shell snapshot capture timed out after ${limits.timeoutMs} ms`), true),
      limits.timeoutMs,
    );
    limits.cancelSignal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', (error) =>
      finish(failure('spawnFailed', `cannot capture shell snapshot: ${error.message}`), true),
    );
    child.stdout?.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limits.maxOutputBytes) {
        finish(failure('tooLarge', `shell snapshot capture exceeds ${limits.maxOutputBytes} bytes`), true);
        return;
      }
      chunks.push(chunk);
    });
    const exitResult = (code: number | null, signal: NodeJS.Signals | null): CaptureRun =>
      code === 0
        ? { ok: true, stdout: Buffer.concat(chunks) }
        : failure('nonZeroExit', `shell snapshot capture exited with ${signal ?? `code ${code}`}`);
    // 'close' comes after the exit and the end of stdout: the normal way out.
    child.on('close', (code, signal) => finish(exitResult(code, signal), false));
    child.on('exit', (code, signal) => {
      // A background job of the profile may hold stdout open: give the pipe a moment, then use
      // what arrived (the parser rejects output that lacks its end marker).
      drainTimer = setTimeout(() => finish(exitResult(code, signal), false), SNAPSHOT_DRAIN_AFTER_EXIT_MS);
    });
  });
}

function failure(reason: CaptureFailureReason, detail: string): CaptureRun {
  return { ok: false, reason, detail };
}
