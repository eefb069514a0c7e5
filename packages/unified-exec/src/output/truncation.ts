import {
  countChars,
  countLines,
  decodeUtf8Lossy,
  encodeUtf8,
  isCharBoundary,
  utf8ByteLength,
} from './utf8.ts';

/** The original's heuristic: one token is about four bytes of UTF-8. */
export const APPROX_BYTES_PER_TOKEN = 4;

/**
 * How much model-facing text a tool result may carry: a byte budget or a token budget
 * (tokens are approximated as 4 bytes). The original's `TruncationPolicy::Bytes|Tokens`.
 */
export interface TruncationPolicy {
  /** `bytes`: the marker counts removed characters; `tokens`: it counts removed tokens. */
  readonly kind: 'bytes' | 'tokens';
  /** Non-negative integer budget in the policy's unit. */
  readonly limit: number;
}

/** Approximate tokens of a text: `ceil(utf8_len / 4)`. */
export function approxTokenCount(text: string): number {
  return approxTokensFromByteCount(utf8ByteLength(text));
}

/** Bytes that `tokens` tokens stand for: `4 * tokens`. */
export function approxBytesForTokens(tokens: number): number {
  return tokens * APPROX_BYTES_PER_TOKEN;
}

/** Tokens that `bytes` bytes stand for: `ceil(bytes / 4)`. */
export function approxTokensFromByteCount(bytes: number): number {
  return Math.ceil(bytes / APPROX_BYTES_PER_TOKEN);
}

/** The policy's budget in bytes (`4 * limit` for a token policy). */
export function byteBudget(policy: TruncationPolicy): number {
  return policy.kind === 'bytes' ? policy.limit : approxBytesForTokens(policy.limit);
}

/** The policy's budget in tokens (`ceil(limit / 4)` for a byte policy). */
export function tokenBudget(policy: TruncationPolicy): number {
  return policy.kind === 'tokens' ? policy.limit : approxTokensFromByteCount(policy.limit);
}

/** The policy with its limit multiplied and rounded up (the original's `policy * 1.2`). */
export function scaleTruncationPolicy(policy: TruncationPolicy, multiplier: number): TruncationPolicy {
  // Same IEEE-754 double arithmetic as the original's `(limit as f64 * m).ceil()`.
  return { kind: policy.kind, limit: Math.ceil(policy.limit * multiplier) };
}

/** `…{n} tokens truncated…` or `…{n} chars truncated…` (U+2026 ellipses, no spaces around). */
export function formatTruncationMarker(useTokens: boolean, removed: number): string {
  return useTokens ? `…${removed} tokens truncated…` : `…${removed} chars truncated…`;
}

/**
 * Keeps the beginning and the end of `text` within `maxBytes` of UTF-8 (half each, on character
 * boundaries) and puts a marker counting removed characters in between.
 */
export function truncateMiddleChars(text: string, maxBytes: number): string {
  return truncateWithByteEstimate(text, maxBytes, false);
}

/**
 * Keeps the beginning and the end of `text` within `4 * maxTokens` bytes and puts a marker
 * counting removed tokens in between. `originalTokenCount` is set when something was cut.
 */
export function truncateMiddleWithTokenBudget(
  text: string,
  maxTokens: number,
): { text: string; originalTokenCount?: number } {
  if (text.length === 0) return { text: '' };
  if (maxTokens > 0 && utf8ByteLength(text) <= approxBytesForTokens(maxTokens)) return { text };
  const truncated = truncateWithByteEstimate(text, approxBytesForTokens(maxTokens), true);
  return truncated === text ? { text } : { text: truncated, originalTokenCount: approxTokenCount(text) };
}

/** Truncates the middle of `text` to fit the policy (no warning header). */
export function truncateText(text: string, policy: TruncationPolicy): string {
  return policy.kind === 'bytes'
    ? truncateMiddleChars(text, policy.limit)
    : truncateMiddleWithTokenBudget(text, policy.limit).text;
}

/**
 * `text` unchanged when it fits the policy's byte budget; otherwise
 * `Warning: truncated output (original token count: N)\nTotal output lines: L\n\n` + the truncated text.
 */
export function formattedTruncateText(text: string, policy: TruncationPolicy): string {
  if (utf8ByteLength(text) <= byteBudget(policy)) return text;
  const header =
    `Warning: truncated output (original token count: ${approxTokenCount(text)})\n` +
    `Total output lines: ${countLines(text)}\n\n`;
  return header + truncateText(text, policy);
}

function truncateWithByteEstimate(text: string, maxBytes: number, useTokens: boolean): string {
  if (text.length === 0) return '';
  const bytes = encodeUtf8(text);
  const total = bytes.length;
  if (maxBytes === 0) {
    const removed = useTokens ? approxTokensFromByteCount(total) : countChars(bytes, 0, total);
    return formatTruncationMarker(useTokens, removed);
  }
  if (total <= maxBytes) return text;

  const leftBudget = Math.floor(maxBytes / 2);
  const rightBudget = maxBytes - leftBudget;
  // Prefix: the longest run of whole characters ending at or before leftBudget.
  let prefixEnd = leftBudget;
  while (!isCharBoundary(bytes, prefixEnd)) prefixEnd--;
  // Suffix: from the first character that starts at or after total - rightBudget.
  let suffixStart = total - rightBudget;
  while (!isCharBoundary(bytes, suffixStart)) suffixStart++;
  if (suffixStart < prefixEnd) suffixStart = prefixEnd;

  const removed = useTokens
    ? approxTokensFromByteCount(total - maxBytes)
    : countChars(bytes, prefixEnd, suffixStart);
  return (
    decodeUtf8Lossy(bytes.subarray(0, prefixEnd)) +
    formatTruncationMarker(useTokens, removed) +
    decodeUtf8Lossy(bytes.subarray(suffixStart))
  );
}
