import type { CaptureFailureReason, CaptureLimits, CaptureRunner } from './capture-runner.ts';
import { captureScript } from './capture-script.ts';
import { parseCaptureOutput } from './parse-capture.ts';
import { renderState } from './render-state.ts';
import type { LaunchCommand, ShellSnapshot } from './restore.ts';
import type { SnapshotShell } from './shell-kind.ts';
import { filterSnapshotEnv, type SnapshotEnvOptions } from './snapshot-env.ts';

/** The outcome of one capture: a snapshot, or why there is none (never thrown). */
export type CaptureResult =
  | { readonly ok: true; readonly snapshot: ShellSnapshot }
  | { readonly ok: false; readonly reason: CaptureFailureReason; readonly detail: string };

/** What `captureSnapshot` needs besides the launch. */
export interface CaptureSnapshotOptions extends SnapshotEnvOptions {
  /** Runs the capture command (e.g. `runCaptureCommand`, or one that adds a sandbox). */
  readonly runner: CaptureRunner;
  readonly limits: CaptureLimits;
}

/**
 * Captures `shell`'s state by running `command` with the capture script in place of its script
 * (still `-lc`, so the login files run, in the same cwd, env, arg0 and wrapper as the launch),
 * then parses, renders and filters it.
 */
export async function captureSnapshot(
  shell: SnapshotShell,
  command: LaunchCommand,
  shellStart: number,
  options: CaptureSnapshotOptions,
): Promise<CaptureResult> {
  const argv = [...command.argv];
  argv[shellStart + 2] = captureScript(shell);
  let run: Awaited<ReturnType<CaptureRunner>>;
  try {
    run = await options.runner({ ...command, argv }, options.limits);
  } catch (error) {
    return {
      ok: false,
      reason: 'runnerFailed',
      detail: error instanceof Error ? error.message : String(error),
    };
  }
  if (!run.ok) return run;
  const parsed = parseCaptureOutput(run.stdout);
  if (!parsed.ok) return { ok: false, reason: 'invalidOutput', detail: parsed.detail };
  const snapshot: ShellSnapshot = Object.freeze({
    shell,
    state: renderState(shell, parsed.sections),
    env: Object.freeze(filterSnapshotEnv(parsed.sections.env, options)),
  });
  return { ok: true, snapshot };
}
