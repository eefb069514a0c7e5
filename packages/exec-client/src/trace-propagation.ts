// W3C trace context from OpenTelemetry, when the application has it. `@opentelemetry/api` is an
// optional peer dependency: loaded once with a dynamic import, and when it is absent no request
// carries a `trace` member.
import type { W3cTraceContext } from '@execd/protocol';

type OpenTelemetryApi = typeof import('@opentelemetry/api');

let api: OpenTelemetryApi | undefined;
let loading: Promise<void> | undefined;

/** Loads `@opentelemetry/api` if it is installed (idempotent; never rejects). */
export function loadOpenTelemetry(): Promise<void> {
  loading ??= import('@opentelemetry/api').then(
    (module) => {
      api = module;
    },
    () => undefined,
  );
  return loading;
}

/**
 * The trace context of the active OpenTelemetry span, as the protocol's `trace` member; undefined
 * without the API, without an active span, or with an invalid one. Read synchronously where a call
 * begins, so the caller's context is the one propagated even when the send happens later.
 */
export function activeTraceContext(): W3cTraceContext | undefined {
  if (api === undefined) return undefined;
  const span = api.trace.getSpanContext(api.context.active());
  if (span === undefined || !api.trace.isSpanContextValid(span)) return undefined;
  const flags = (span.traceFlags & 0xff).toString(16).padStart(2, '0');
  const traceparent = `00-${span.traceId}-${span.spanId}-${flags}`;
  const tracestate = span.traceState?.serialize();
  return tracestate ? { traceparent, tracestate } : { traceparent };
}
