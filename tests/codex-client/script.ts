// The script every Codex session of the real-client suite runs: each step is one model turn.
import type { ScriptStep } from './codex-run.ts';

/** Text of the AGENTS.md put into the working folder: it must reach the model's first request. */
export const AGENTS_MARKER = 'AGENTS-MARKER-7731: answer briefly';

/** A real 4x4 red PNG (73 bytes). */
export const RED_PNG: Uint8Array = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAQAAAAECAIAAAAmkwkpAAAAEElEQVR4nGP4z8AARwzEcQCukw/x0F8jngAAAABJRU5ErkJggg==',
  'base64',
);

/** A labelled step. */
export interface LabelledStep {
  readonly label: string;
  readonly step: ScriptStep;
}

function patch(body: string): string {
  return `*** Begin Patch\n${body}*** End Patch\n`;
}

/**
 * The steps, given the folder outside the workspace that writes try to reach (not under /tmp:
 * workspace-write lets commands write /tmp and $TMPDIR).
 */
export function scriptSteps(outside: string): LabelledStep[] {
  return [
    {
      label: 'exec_command in a login shell reads AGENTS.md',
      step: { name: 'exec_command', arguments: { cmd: 'echo hi; head -1 AGENTS.md' } },
    },
    {
      label: 'exec_command with a tty keeps a session open',
      step: {
        name: 'exec_command',
        arguments: { cmd: 'printf ready; read x; echo got:$x', tty: true, login: false, yield_time_ms: 1000 },
      },
    },
    {
      label: 'write_stdin answers the tty session, which exits',
      step: {
        name: 'write_stdin',
        arguments: { session_id: '$LAST_SESSION', chars: 'hello\n', yield_time_ms: 5000 },
      },
    },
    {
      label: 'exec_command with a tty runs sleep 30',
      step: {
        name: 'exec_command',
        arguments: { cmd: 'exec sleep 30', tty: true, login: false, yield_time_ms: 500 },
      },
    },
    {
      label: 'write_stdin sends Ctrl-C to it: the exit code Codex reports',
      step: {
        name: 'write_stdin',
        arguments: { session_id: '$LAST_SESSION', chars: '\u0003', yield_time_ms: 5000 },
      },
    },
    {
      label: 'exec_command with pipes: stdout, stderr and an exit code',
      step: {
        name: 'exec_command',
        // Two pipes are read independently: without the pause either order is right.
        arguments: { cmd: 'printf out; sleep 0.5; printf err >&2; exit 3', login: false },
      },
    },
    {
      label: 'apply_patch adds a file',
      step: { name: 'apply_patch', input: patch('*** Add File: a.txt\n+one\n+two\n') },
    },
    {
      label: 'apply_patch updates it',
      step: { name: 'apply_patch', input: patch('*** Update File: a.txt\n@@\n one\n-two\n+TWO\n') },
    },
    {
      label: 'apply_patch moves it',
      step: {
        name: 'apply_patch',
        input: patch('*** Update File: a.txt\n*** Move to: b.txt\n@@\n one\n-TWO\n+three\n'),
      },
    },
    {
      label: 'apply_patch with context that is not there fails',
      step: { name: 'apply_patch', input: patch('*** Update File: b.txt\n@@\n-no such line\n+x\n') },
    },
    {
      label: 'apply_patch deletes a file',
      step: { name: 'apply_patch', input: patch('*** Delete File: b.txt\n') },
    },
    {
      label: 'apply_patch outside the workspace',
      step: { name: 'apply_patch', input: patch(`*** Add File: ${outside}/patch.txt\n+x\n`) },
    },
    { label: 'view_image of a PNG', step: { name: 'view_image', arguments: { path: 'red.png' } } },
    {
      label: 'view_image of a missing file',
      step: { name: 'view_image', arguments: { path: 'missing.png' } },
    },
    {
      label: 'exec_command writes outside the workspace',
      step: {
        name: 'exec_command',
        arguments: { cmd: `touch ${outside}/exec.txt; echo rc=$?`, login: false },
      },
    },
    {
      label: 'exec_command lists what the patches left',
      step: { name: 'exec_command', arguments: { cmd: 'ls; cat a.txt b.txt 2>&1', login: false } },
    },
  ];
}
