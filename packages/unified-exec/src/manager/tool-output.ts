import { generateChunkId } from '../output/chunk-id.ts';
import {
  type ExecCommandStructuredResult,
  type ExecCommandToolOutputInput,
  execCommandStructuredResult,
  formatExecCommandToolOutput,
} from '../output/exec-output.ts';
import type { HeadTailBuffer } from '../output/head-tail-buffer.ts';
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
  fields: Pick<ExecCommandToolOutput, 'processId' | 'exitCode' | 'maxOutputTokens' | 'command'>,
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
