import { generateChunkId } from '../output/chunk-id.ts';
import {
  type ExecCommandStructuredResult,
  type ExecCommandToolOutputInput,
  execCommandStructuredResult,
  formatExecCommandToolOutput,
} from '../output/exec-output.ts';
import type { HeadTailBuffer } from '../output/head-tail-buffer.ts';
import { type OutputPresentation, presentOutputBytes } from '../output/present-output.ts';
import type { TruncationPolicy } from '../output/truncation.ts';

/** The result of one exec_command / write_stdin call, before it is rendered for the model. */
export interface ExecCommandToolOutput {
  /** The exec_command call that started the process (for events and hooks). */
  readonly callId: string;
  /** 6 lowercase hex digits. */
  readonly chunkId: string;
  /** Seconds this call waited for output. */
  readonly wallTimeSeconds: number;
  /** Collected bytes, with the omission marker when the middle was dropped. */
  readonly rawOutput: Uint8Array;
  /** Bytes dropped from the middle (0 when none). */
  readonly omittedBytes: number;
  /** `ceil(total_bytes / 4)`, omitted bytes included. */
  readonly originalTokenCount: number | undefined;
  /** Set while the process still runs: the `session_id` for write_stdin. */
  readonly processId: number | undefined;
  /** Set once the process exited. */
  readonly exitCode: number | undefined;
  /** The model's `max_output_tokens`. */
  readonly maxOutputTokens: number | undefined;
  /** argv of the process (undefined for outputs without a process). */
  readonly command: readonly string[] | undefined;
  /** The model's `cmd` that started the process (what hooks see as the Bash command). */
  readonly hookCommand?: string | undefined;
  /** execd addition: secrets masked in `rawOutput` (absent or 0: none). */
  readonly maskedSecrets?: number | undefined;
}

function formatterInput(
  output: ExecCommandToolOutput,
  turnPolicy?: TruncationPolicy,
): ExecCommandToolOutputInput {
  return {
    chunkId: output.chunkId,
    wallTimeSeconds: output.wallTimeSeconds,
    rawOutput: output.rawOutput,
    omittedBytes: output.omittedBytes,
    ...(output.exitCode === undefined ? {} : { exitCode: output.exitCode }),
    ...(output.processId === undefined ? {} : { processId: output.processId }),
    ...(output.originalTokenCount === undefined ? {} : { originalTokenCount: output.originalTokenCount }),
    ...(output.maxOutputTokens === undefined ? {} : { maxOutputTokens: output.maxOutputTokens }),
    ...(output.maskedSecrets ? { maskedSecrets: output.maskedSecrets } : {}),
    ...(turnPolicy === undefined ? {} : { turnPolicy }),
  };
}

/** The exact text the original sends to the model for this output. */
export function renderToolOutputText(output: ExecCommandToolOutput, turnPolicy?: TruncationPolicy): string {
  return formatExecCommandToolOutput(formatterInput(output, turnPolicy));
}

/** The structured (code-mode JSON) form of this output. */
export function renderToolOutputJson(
  output: ExecCommandToolOutput,
  turnPolicy?: TruncationPolicy,
): ExecCommandStructuredResult {
  return execCommandStructuredResult(formatterInput(output, turnPolicy));
}

/** The output of a call that collected `collected` in `wallTimeSeconds` (fresh chunk id, token count of all bytes). */
export function buildToolOutput(
  callId: string,
  collected: HeadTailBuffer,
  wallTimeSeconds: number,
  fields: Pick<
    ExecCommandToolOutput,
    'processId' | 'exitCode' | 'maxOutputTokens' | 'command' | 'hookCommand'
  >,
): ExecCommandToolOutput {
  return {
    callId,
    chunkId: generateChunkId(),
    wallTimeSeconds,
    rawOutput: collected.toBytesWithOmissionMarker(),
    omittedBytes: collected.omittedBytes,
    originalTokenCount: Math.ceil(collected.totalBytes / 4),
    ...fields,
  };
}

/**
 * `output` with `presentation` applied to its bytes (terminal rendering for tty sessions, secret
 * masking); the same object when nothing changed. The token count then counts what is shown.
 */
export async function presentToolOutput(
  output: ExecCommandToolOutput,
  options: { readonly tty: boolean; readonly presentation: OutputPresentation | undefined },
): Promise<ExecCommandToolOutput> {
  const { presentation } = options;
  if (presentation === undefined) return output;
  const presented = await presentOutputBytes(output.rawOutput, { tty: options.tty, presentation });
  if (presented.bytes === output.rawOutput) return output;
  return {
    ...output,
    rawOutput: presented.bytes,
    originalTokenCount: Math.ceil((presented.bytes.byteLength + output.omittedBytes) / 4),
    ...(presented.maskedSecrets > 0 ? { maskedSecrets: presented.maskedSecrets } : {}),
  };
}
