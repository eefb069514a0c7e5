import * as v from 'valibot';
import { FrameDecodeError } from './errors.ts';
import {
  ErrorEnvelope,
  NotificationEnvelope,
  RequestEnvelope,
  ResponseEnvelope,
  type RpcMessage,
} from './schemas/envelope.ts';

function describeIssues(issues: readonly v.BaseIssue<unknown>[]): string {
  return issues
    .map((issue) => {
      const path = issue.path?.map((p) => String(p.key)).join('.');
      return path ? `${path}: ${issue.message}` : issue.message;
    })
    .join('; ');
}

/**
 * Classifies a decoded value as the original does: has `method` -> request if it also has `id`,
 * else notification; else has `result` -> response; else error. Throws FrameDecodeError (-32600).
 */
export function classifyMessage(raw: unknown): RpcMessage {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw) || raw instanceof Uint8Array) {
    throw new FrameDecodeError('invalidRequest', 'JSON-RPC message must be an object');
  }
  const record = raw as Record<string, unknown>;
  if ('method' in record) {
    if ('id' in record && record.id !== undefined && record.id !== null) {
      const parsed = v.safeParse(RequestEnvelope, record);
      if (!parsed.success) throw new FrameDecodeError('invalidRequest', `invalid request: ${describeIssues(parsed.issues)}`);
      const { id, method, params, trace } = parsed.output;
      return trace === undefined
        ? { kind: 'request', id, method, params: params ?? null }
        : { kind: 'request', id, method, params: params ?? null, trace };
    }
    const parsed = v.safeParse(NotificationEnvelope, record);
    if (!parsed.success) {
      throw new FrameDecodeError('invalidRequest', `invalid notification: ${describeIssues(parsed.issues)}`);
    }
    return { kind: 'notification', method: parsed.output.method, params: parsed.output.params ?? null };
  }
  if ('result' in record) {
    const parsed = v.safeParse(ResponseEnvelope, record);
    if (!parsed.success) throw new FrameDecodeError('invalidRequest', `invalid response: ${describeIssues(parsed.issues)}`);
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
      return { method: message.method, params: message.params };
    case 'response':
      return { id: message.id, result: message.result };
    case 'error':
      return { id: message.id, error: message.error };
  }
}

export { describeIssues };
