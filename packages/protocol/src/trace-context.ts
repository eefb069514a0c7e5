import * as v from 'valibot';

/** A W3C `traceparent`: version 00, 32 hex trace id, 16 hex span id, 2 hex flags (lowercase). */
const TRACEPARENT = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * The `trace` member of a request: the caller's W3C trace context
 * (https://www.w3.org/TR/trace-context/), the original's `W3cTraceContext`. Both members are the
 * header values verbatim. Receivers treat it as a hint: a malformed one is ignored, never refused.
 */
export const W3cTraceContext = v.object({
  /** `00-<trace id>-<parent span id>-<flags>`. */
  traceparent: v.optional(v.string()),
  /** Vendor entries, `key=value` pairs separated by commas. */
  tracestate: v.optional(v.string()),
});
export type W3cTraceContext = v.InferOutput<typeof W3cTraceContext>;

/**
 * The trace context of a received frame's `trace` member when it carries a well-formed
 * `traceparent` (version 00); otherwise undefined (absent, malformed, or an all-zero id).
 */
export function readTraceContext(
  trace: unknown,
): { readonly traceparent: string; readonly tracestate?: string } | undefined {
  const parsed = v.safeParse(W3cTraceContext, trace);
  if (!parsed.success) return undefined;
  const { traceparent, tracestate } = parsed.output;
  if (traceparent === undefined || !TRACEPARENT.test(traceparent)) return undefined;
  return tracestate === undefined ? { traceparent } : { traceparent, tracestate };
}
