import type { Logger } from '@execd/protocol';
import type { ExecCommandToolOutput } from '../manager/tool-output.ts';
import { renderToolOutputJson } from '../manager/tool-output.ts';
import type { TruncationPolicy } from '../output/truncation.ts';

/** The tool a hook payload is about: exec_command is `Bash`, the apply_patch tool `apply_patch`. */
export type HookToolName = 'Bash' | 'apply_patch';

/**
 * What a PreToolUse hook is told (the original's payload): the model's raw `cmd` as a Bash
 * command, or the apply_patch tool's patch text as its `command`.
 */
export interface PreToolUsePayload {
  readonly tool_name: HookToolName;
  /** The call id. */
  readonly tool_use_id: string;
  readonly tool_input: { readonly command: string };
}

/**
 * What a PostToolUse hook is told once a command completed: in the exec_command call that saw
 * it exit, or in the write_stdin call that did (then `tool_use_id` and `command` are the
 * original exec_command's). Never sent while the process still runs.
 */
export interface PostToolUsePayload {
  readonly tool_name: HookToolName;
  readonly tool_use_id: string;
  readonly tool_input: { readonly command: string };
  /** The command's output as the model sees it (truncated to the call's budget). */
  readonly tool_response: string;
}

/**
 * What a PreToolUse hook may answer to stop the call (the original's `should_block` with its
 * `block_reason`: a hook's `permissionDecision: "deny"` or exit code 2). Anything else lets it run.
 */
export interface PreToolUseBlock {
  readonly decision: 'block';
  /** Shown to the model; a blank reason does not block (as the original). */
  readonly reason: string;
}

/** What a PreToolUse hook answers: a block, or nothing (the call runs). */
export type PreToolUseAnswer = PreToolUseBlock | undefined;

/** A PreToolUse hook: may block the call; throwing is logged and lets the call run (fail open). */
export type PreToolUseHook = (
  payload: PreToolUsePayload,
) => void | PreToolUseAnswer | Promise<void> | Promise<PreToolUseAnswer>;

/** Hook callbacks around the tools (a throwing hook is logged and ignored). */
export interface ToolHooks {
  /**
   * Before an exec_command or an apply_patch tool call runs (not for write_stdin; a patch run
   * through exec_command is its Bash command); may block it.
   */
  readonly preToolUse?: PreToolUseHook | undefined;
  /** After a call that saw its command complete. */
  readonly postToolUse?: ((payload: PostToolUsePayload) => void | Promise<void>) | undefined;
}

/** The PostToolUse payload for a call's output, or undefined while the process runs. */
export function postToolUsePayload(
  output: ExecCommandToolOutput,
  turnPolicy?: TruncationPolicy,
): PostToolUsePayload | undefined {
  if (output.processId !== undefined || output.hookCommand === undefined) return undefined;
  return {
    tool_name: 'Bash',
    tool_use_id: output.callId,
    tool_input: { command: output.hookCommand },
    tool_response: renderToolOutputJson(output, turnPolicy).output,
  };
}

/**
 * Runs the PreToolUse hook: the text the model gets when it blocks the call (the original's
 * `Command blocked by PreToolUse hook: {reason}. Command: {command}`), else undefined.
 */
export async function runPreToolUseHook(
  hook: PreToolUseHook | undefined,
  payload: PreToolUsePayload,
  logger?: Logger,
): Promise<string | undefined> {
  if (hook === undefined) return undefined;
  let answer: PreToolUseAnswer;
  try {
    answer = (await hook(payload)) ?? undefined;
  } catch (error) {
    logger?.warn('unified-exec: a tool hook threw', { error });
    return undefined;
  }
  if (answer === undefined || answer === null || answer.decision !== 'block') return undefined;
  const reason = typeof answer.reason === 'string' ? answer.reason : '';
  if (reason.trim().length === 0) return undefined;
  return `Command blocked by PreToolUse hook: ${reason}. Command: ${payload.tool_input.command}`;
}

/** Runs a hook, logging (not propagating) what it throws. */
export async function runHook<T>(
  hook: ((payload: T) => void | Promise<void>) | undefined,
  payload: T | undefined,
  logger?: Logger,
): Promise<void> {
  if (hook === undefined || payload === undefined) return;
  try {
    await hook(payload);
  } catch (error) {
    logger?.warn('unified-exec: a tool hook threw', { error });
  }
}
