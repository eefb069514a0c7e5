import type { ExecCommandToolOutput } from '../manager/tool-output.ts';
import { renderToolOutputJson, renderToolOutputText } from '../manager/tool-output.ts';
import type { ExecCommandStructuredResult } from '../output/exec-output.ts';
import type { TruncationPolicy } from '../output/truncation.ts';

/** What a tool call returns to the host: the model-facing text and, on success, the details. */
export interface ToolCallResult {
  /** The function-call output text the model reads. */
  readonly text: string;
  /** False for argument and manager errors (the original's `success: false`). */
  readonly success: boolean;
  /** The structured (code-mode JSON) result of a successful call. */
  readonly structured?: ExecCommandStructuredResult | undefined;
  /** The unrendered result of a successful call. */
  readonly output?: ExecCommandToolOutput | undefined;
}

/** A successful call's result, rendered both ways. */
export function successResult(output: ExecCommandToolOutput, turnPolicy?: TruncationPolicy): ToolCallResult {
  return {
    text: renderToolOutputText(output, turnPolicy),
    success: true,
    structured: renderToolOutputJson(output, turnPolicy),
    output,
  };
}

/** A failed call: the text the model gets instead of output. */
export function errorResult(text: string): ToolCallResult {
  return { text, success: false };
}
