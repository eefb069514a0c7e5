import * as v from 'valibot';

/** JSON-RPC request id: a string or an integer (the original's untagged `RequestId`). */
export const RequestId = v.union([v.string(), v.pipe(v.number(), v.safeInteger())]);
export type RequestId = v.InferOutput<typeof RequestId>;

/** The JSON-RPC error object. */
export const WireErrorSchema = v.object({
  code: v.pipe(v.number(), v.integer()),
  message: v.string(),
  data: v.optional(v.unknown()),
});

/** `{id, method, params?, trace?}`; no `jsonrpc` field on the wire (an incoming one is ignored). */
export const RequestEnvelope = v.object({
  id: RequestId,
  method: v.string(),
  params: v.optional(v.unknown()),
  /** W3C trace context, passed through. */
  trace: v.optional(v.unknown()),
});

/** `{method, params?, trace?}`. */
export const NotificationEnvelope = v.object({
  method: v.string(),
  params: v.optional(v.unknown()),
  /** W3C trace context, passed through. */
  trace: v.optional(v.unknown()),
});

/** `{id, result}`. */
export const ResponseEnvelope = v.object({
  id: RequestId,
  result: v.unknown(),
});

/** `{id, error}`; `id` is -1 (or null from other peers) when the request could not be read. */
export const ErrorEnvelope = v.object({
  id: v.nullable(RequestId),
  error: WireErrorSchema,
});

/** A decoded, classified frame. */
export type RpcMessage =
  | { kind: 'request'; id: RequestId; method: string; params: unknown; trace?: unknown }
  | { kind: 'notification'; method: string; params: unknown; trace?: unknown }
  | { kind: 'response'; id: RequestId; result: unknown }
  | { kind: 'error'; id: RequestId | null; error: { code: number; message: string; data?: unknown } };
