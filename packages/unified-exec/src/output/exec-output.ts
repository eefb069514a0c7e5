import { DEFAULT_MAX_OUTPUT_TOKENS } from '../constants.ts';
import { formatOutputOmissionMarker } from './head-tail-buffer.ts';
import {
  approxTokenCount,
  byteBudget,
  formattedTruncateText,
  scaleTruncationPolicy,
  type TruncationPolicy,
  tokenBudget,
  truncateText,
} from './truncation.ts';
import { decodeUtf8Lossy, utf8ByteLength } from './utf8.ts';

/** The turn policy of the oracle's model (`gpt-5.5`): 10,000 tokens. */
export const DEFAULT_TURN_TRUNCATION_POLICY: TruncationPolicy = Object.freeze({
  kind: 'tokens',
  limit: 10_000,
});

/** Headroom the original's history keeps for serialisation on top of the turn policy. */
export const SERIALIZATION_ALLOWANCE = 1.2;

/** Everything the tool-result text of one `exec_command` / `write_stdin` call is made from. */
export interface ExecCommandToolOutputInput {
  /** 6 lowercase hex chars; empty or absent omits the `Chunk ID:` line. */
  readonly chunkId?: string;
  /** Seconds spent in this call, printed with 4 decimals. */
  readonly wallTimeSeconds: number;
  /** Set when the process exited during this call. */
  readonly exitCode?: number;
  /** Set while the process is still running: the model's `session_id`. */
  readonly processId?: number;
  /** `ceil(total_bytes / 4)` where total includes omitted bytes. */
  readonly originalTokenCount?: number;
  /** Collected bytes, with the head/tail omission marker already in place when bytes were dropped. */
  readonly rawOutput: Uint8Array;
  /** Bytes dropped by the output cap before this formatting (0 or absent: none). */
  readonly omittedBytes?: number;
  /** The model's `max_output_tokens`; absent means 10,000. */
  readonly maxOutputTokens?: number;
  /** The turn's truncation policy; defaults to {@link DEFAULT_TURN_TRUNCATION_POLICY}. */
  readonly turnPolicy?: TruncationPolicy;
  /**
   * execd addition: secrets masked in the output. Said in a `Redacted secrets: N` line before
   * `Output:` only when non-zero, so unmasked results keep the original's text.
   */
  readonly maskedSecrets?: number;
}

/** The structured (code-mode) result: field names and order as the original's JSON. */
export interface ExecCommandStructuredResult {
  chunk_id?: string;
  wall_time_seconds: number;
  exit_code?: number;
  session_id?: number;
  original_token_count?: number;
  /** execd addition, only when non-zero: secrets masked in `output`. */
  redacted_secrets?: number;
  output: string;
}

/** The policy applied to the output: the smaller of `max_output_tokens` and the turn policy. */
export function modelOutputPolicy(input: ExecCommandToolOutputInput): TruncationPolicy {
  const requested: TruncationPolicy = {
    kind: 'tokens',
    limit: input.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS,
  };
  const turn = input.turnPolicy ?? DEFAULT_TURN_TRUNCATION_POLICY;
  return byteBudget(requested) < byteBudget(turn) ? requested : turn;
}

/** The output text truncated to `policy`, keeping (or adding) the omission notice. */
export function truncatedExecOutput(input: ExecCommandToolOutputInput, policy: TruncationPolicy): string {
  const text = decodeUtf8Lossy(input.rawOutput);
  const omitted = input.omittedBytes ?? 0;
  if (omitted <= 0) return formattedTruncateText(text, policy);

  const marker = formatOutputOmissionMarker(omitted);
  if (utf8ByteLength(text) <= byteBudget(policy)) {
    return text.includes(marker) ? text : `${marker}\n${text}`;
  }
  const originalTokenCount = input.originalTokenCount ?? approxTokenCount(text);
  const truncated = truncateText(text, policy);
  const notice = truncated.includes(marker) ? '' : `${marker}\n`;
  return `Warning: truncated output (original token count: ${originalTokenCount})\n${notice}\n${truncated}`;
}

/** The metadata lines ending with `Output:` (no trailing newline). */
export function formatExecCommandResponseHeader(input: ExecCommandToolOutputInput): string {
  const lines: string[] = [];
  if (input.chunkId) lines.push(`Chunk ID: ${input.chunkId}`);
  lines.push(`Wall time: ${formatWallTimeSeconds(input.wallTimeSeconds)} seconds`);
  if (input.exitCode !== undefined) lines.push(`Process exited with code ${input.exitCode}`);
  if (input.processId !== undefined) lines.push(`Process running with session ID ${input.processId}`);
  if (input.originalTokenCount !== undefined) lines.push(`Original token count: ${input.originalTokenCount}`);
  if (input.maskedSecrets) lines.push(`Redacted secrets: ${input.maskedSecrets}`);
  lines.push('Output:');
  return lines.join('\n');
}

/**
 * The exact tool-result text the original sends to the model: header, newline, output. The
 * output is re-truncated (shrinking the policy by the excess) until the whole response fits
 * `byte_budget(turn_policy * 1.2)`, so history never truncates it a second time.
 */
export function formatExecCommandToolOutput(input: ExecCommandToolOutputInput): string {
  const header = formatExecCommandResponseHeader(input);
  const turn = input.turnPolicy ?? DEFAULT_TURN_TRUNCATION_POLICY;
  const budget = Math.max(
    0,
    byteBudget(scaleTruncationPolicy(turn, SERIALIZATION_ALLOWANCE)) - (utf8ByteLength(header) + 1),
  );
  let policy = modelOutputPolicy(input);
  let output = truncatedExecOutput(input, policy);
  let outputBytes = utf8ByteLength(output);
  while (outputBytes > budget && byteBudget(policy) > 0) {
    const excess = outputBytes - budget;
    const shrinkBy = policy.kind === 'bytes' ? excess : tokenBudget({ kind: 'bytes', limit: excess });
    policy = { kind: policy.kind, limit: Math.max(0, policy.limit - shrinkBy) };
    output = truncatedExecOutput(input, policy);
    outputBytes = utf8ByteLength(output);
  }
  return `${header}\n${output}`;
}

/**
 * The structured result (code mode): output is truncated to `max_output_tokens` only when the
 * model gave one, otherwise it is the whole lossily decoded raw output.
 */
export function execCommandStructuredResult(input: ExecCommandToolOutputInput): ExecCommandStructuredResult {
  // Built field by field so that JSON.stringify keeps the original's field order.
  const result = {} as ExecCommandStructuredResult;
  if (input.chunkId) result.chunk_id = input.chunkId;
  result.wall_time_seconds = input.wallTimeSeconds;
  if (input.exitCode !== undefined) result.exit_code = input.exitCode;
  if (input.processId !== undefined) result.session_id = input.processId;
  if (input.originalTokenCount !== undefined) result.original_token_count = input.originalTokenCount;
  if (input.maskedSecrets) result.redacted_secrets = input.maskedSecrets;
  result.output =
    input.maxOutputTokens === undefined
      ? decodeUtf8Lossy(input.rawOutput)
      : truncatedExecOutput(input, { kind: 'tokens', limit: input.maxOutputTokens });
  return result;
}

/**
 * Seconds with exactly 4 decimals, as Rust's `{:.4}`: exact decimal rounding, ties to even
 * (JavaScript's `toFixed` breaks exact ties upwards instead).
 */
export function formatWallTimeSeconds(seconds: number): string {
  if (!Number.isFinite(seconds)) return String(seconds);
  const negative = seconds < 0 || Object.is(seconds, -0);
  const magnitude = Math.abs(seconds);
  // A double is exactly halfway between two 4-decimal values only when it is an odd multiple of
  // 1/32 (x = (2k+1)/20000 must be a dyadic rational); multiplying by 32 is exact.
  const scaled32 = magnitude * 32;
  let text: string;
  if (Number.isInteger(scaled32) && scaled32 % 2 === 1 && magnitude < 2 ** 40) {
    const lower = Math.floor(magnitude * 10_000);
    const units = lower % 2 === 0 ? lower : lower + 1;
    text = `${Math.floor(units / 10_000)}.${String(units % 10_000).padStart(4, '0')}`;
  } else {
    text = magnitude.toFixed(4);
  }
  return negative ? `-${text}` : text;
}
