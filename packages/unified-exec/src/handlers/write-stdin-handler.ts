import type { UnifiedExecProcessManager } from '../manager/process-manager.ts';
import type { TruncationPolicy } from '../output/truncation.ts';
import { parseWriteStdinArgs } from '../tools/write-stdin-args.ts';
import { errorResult, successResult, type ToolCallResult } from './tool-call-result.ts';
import { postToolUsePayload, runHook, type ToolHooks } from './tool-hooks.ts';

/** What the write_stdin handler needs. */
export interface WriteStdinHandlerOptions {
  readonly manager: UnifiedExecProcessManager;
  /** The turn's truncation policy (default 10,000 tokens). */
  readonly turnPolicy?: TruncationPolicy | undefined;
  /** Post-tool-use callback (fired with the original exec_command's id once the command ends). */
  readonly hooks?: ToolHooks | undefined;
}

/**
 * The write_stdin tool (the original's `WriteStdinHandler`): parses the model's JSON arguments
 * and writes to (or polls) a stored process. Never throws: errors come back as text
 * (`write_stdin failed: …`).
 */
export async function handleWriteStdin(
  handler: WriteStdinHandlerOptions,
  args: unknown,
  options: { readonly cancelSignal?: AbortSignal | undefined } = {},
): Promise<ToolCallResult> {
  const parsed = parseWriteStdinArgs(args);
  if (!parsed.ok) return errorResult(parsed.message);
  try {
    const output = await handler.manager.writeStdin({
      processId: parsed.args.session_id,
      input: parsed.args.chars,
      yieldTimeMs: parsed.args.yield_time_ms,
      maxOutputTokens: parsed.args.max_output_tokens,
      cancelSignal: options.cancelSignal,
    });
    await runHook(handler.hooks?.postToolUse, postToolUsePayload(output, handler.turnPolicy));
    return successResult(output, handler.turnPolicy);
  } catch (error) {
    return errorResult(`write_stdin failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}
