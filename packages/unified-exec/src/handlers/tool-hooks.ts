import type { Logger } from '@execd/protocol';
import type { ExecCommandToolOutput } from '../manager/tool-output.ts';
import { renderToolOutputJson } from '../manager/tool-output.ts';
import type { TruncationPolicy } from '../output/truncation.ts';

/** What a PreToolUse hook is told (the original's payload: the model's raw `cmd` as a Bash command). */
export interface PreToolUsePayload {
  readonly tool_name: 'Bash';
  /** The exec_command call id. */
  readonly tool_use_id: string;
  readonly tool_input: { readonly command: string };
}

/**
 * What a PostToolUse hook is told once a command completed: in the exec_command call that saw
 * it exit, or in the write_stdin call that did (then `tool_use_id` and `command` are the
 * original exec_command's). Never sent while the process still runs.
 */
export interface PostToolUsePayload {
  readonly tool_name: 'Bash';
  readonly tool_use_id: string;
  readonly tool_input: { readonly command: string };
  /** The command's output as the model sees it (truncated to the call's budget). */
  readonly tool_response: string;
}

/** Hook callbacks around the tools (observers: a throwing hook is logged and ignored). */
export interface ToolHooks {
  /** Before an exec_command runs (not for write_stdin). */
  readonly preToolUse?: ((payload: PreToolUsePayload) => void | Promise<void>) | undefined;
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
