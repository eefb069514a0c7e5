import * as v from 'valibot';
import { FrameDecodeError } from './errors.ts';
import { describeIssues } from './issues.ts';
import {
  ErrorEnvelope,
  NotificationEnvelope,
  RequestEnvelope,
  ResponseEnvelope,
  type RpcMessage,
} from './schemas/envelope.ts';

/**
 * Classifies a decoded value as the original does: has `method` -> request if it also has an `id`
 * key (so `"id": null` is refused, as the original does), else notification; else has `result`
 * -> response; else error. A `jsonrpc` member is ignored. Throws FrameDecodeError (-32600).
 */
export function classifyMessage(raw: unknown): RpcMessage {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw) || raw instanceof Uint8Array) {
    throw new FrameDecodeError('invalidRequest', 'expected a JSON-RPC object');
  }
  const record = raw as Record<string, unknown>;
  if (Object.hasOwn(record, 'method')) {
    if (Object.hasOwn(record, 'id')) {
      const parsed = v.safeParse(RequestEnvelope, record);
      if (!parsed.success)
        throw new FrameDecodeError('invalidRequest', `invalid request: ${describeIssues(parsed.issues)}`);
      const { id, method, params, trace } = parsed.output;
      return trace === undefined
        ? { kind: 'request', id, method, params: params ?? null }
        : { kind: 'request', id, method, params: params ?? null, trace };
    }
    const parsed = v.safeParse(NotificationEnvelope, record);
    if (!parsed.success) {
      throw new FrameDecodeError('invalidRequest', `invalid notification: ${describeIssues(parsed.issues)}`);
    }
    const { method, params, trace } = parsed.output;
    return trace === undefined
      ? { kind: 'notification', method, params: params ?? null }
      : { kind: 'notification', method, params: params ?? null, trace };
  }
  if (Object.hasOwn(record, 'result')) {
    const parsed = v.safeParse(ResponseEnvelope, record);
    if (!parsed.success)
      throw new FrameDecodeError('invalidRequest', `invalid response: ${describeIssues(parsed.issues)}`);
    return { kind: 'response', id: parsed.output.id, result: parsed.output.result };
  }
  const parsed = v.safeParse(ErrorEnvelope, record);
  if (!parsed.success) {
    throw new FrameDecodeError('invalidRequest', `not a JSON-RPC message: ${describeIssues(parsed.issues)}`);
  }
  return { kind: 'error', id: parsed.output.id, error: parsed.output.error };
}

/** The wire object for a message (no `kind`, no `jsonrpc`). */
export function toWireObject(message: RpcMessage): Record<string, unknown> {
  switch (message.kind) {
    case 'request':
      return message.trace === undefined
        ? { id: message.id, method: message.method, params: message.params }
        : { id: message.id, method: message.method, params: message.params, trace: message.trace };
    case 'notification':
      return message.trace === undefined
        ? { method: message.method, params: message.params }
        : { method: message.method, params: message.params, trace: message.trace };
    case 'response':
      return { id: message.id, result: message.result };
    case 'error':
      return { id: message.id, error: message.error };
  }
}

export { describeIssues } from './issues.ts';
