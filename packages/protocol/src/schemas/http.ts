import * as v from 'valibot';
import { Bytes, opt, orNull, Seq, UInt, withDefault } from './common.ts';

/** One HTTP header; repeated names are kept as separate entries, in order. */
export const HttpHeader = v.object({
  /** The header name as sent (responses carry it lower-cased). */
  name: v.string(),
  /** The value; with `valueEnvVar`, the prefix put before the variable's value (`"Bearer "`). */
  value: v.string(),
  /**
   * Requests only: the executor appends the value of this environment variable of its own
   * process (a token the client never sees). Credentials of the executor itself are refused.
   */
  valueEnvVar: opt(v.string()),
});
export type HttpHeader = v.InferOutput<typeof HttpHeader>;

/** Whether the executor follows redirects (at most 10) or returns the redirect response. */
export const HttpRedirectPolicy = v.picklist(['follow', 'stop']);
export type HttpRedirectPolicy = v.InferOutput<typeof HttpRedirectPolicy>;

/** `http/request` params: one HTTP request the executor makes from its own host. */
export const HttpRequestParams = v.object({
  /** The HTTP method, e.g. `GET`, `POST`. */
  method: v.string(),
  /** An absolute `http://` or `https://` URL; a fragment is not sent. */
  url: v.string(),
  /** Request headers in order. */
  headers: withDefault(v.array(HttpHeader), []),
  /** The request body (base64 on the JSON codec). */
  bodyBase64: opt(Bytes),
  /** Deadline for the whole exchange, body included, in ms; absent or `null` = none. */
  timeoutMs: opt(UInt),
  redirectPolicy: withDefault(HttpRedirectPolicy, 'follow'),
  /**
   * Caller-chosen id of the streamed body's `http/request/bodyDelta` notifications; unique on
   * the connection until the last delta (`done`) arrives. Required even when not streaming.
   */
  requestId: v.string(),
  /** Answer after the response headers and send the body as `http/request/bodyDelta` notifications. */
  streamResponse: withDefault(v.boolean(), false),
});
export type HttpRequestParams = v.InferOutput<typeof HttpRequestParams>;

/** `http/request` result. */
export const HttpRequestResponse = v.object({
  /** The HTTP status code. */
  status: UInt,
  /** Response headers in order, names lower-cased; values that are not visible ASCII are left out. */
  headers: v.array(HttpHeader),
  /** The whole body; empty when `streamResponse` was set. */
  bodyBase64: Bytes,
});
export type HttpRequestResponse = v.InferOutput<typeof HttpRequestResponse>;

/** `http/request/bodyDelta` notification: one piece of a streamed response body. */
export const HttpRequestBodyDeltaNotification = v.object({
  requestId: v.string(),
  /** 1 for the first delta of a request, then +1 each. */
  seq: Seq,
  /** At most 1 MiB of body bytes; empty in the last delta. */
  deltaBase64: Bytes,
  /** True in the last delta of the request (after the whole body, or with `error`). */
  done: v.boolean(),
  /** Why the body ended early (only with `done`); `null` otherwise. */
  error: orNull(v.string()),
});
export type HttpRequestBodyDeltaNotification = v.InferOutput<typeof HttpRequestBodyDeltaNotification>;
