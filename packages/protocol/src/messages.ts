import { toWireError } from './errors.ts';
import type { RequestId, RpcMessage } from './schemas/envelope.ts';

/** Builds a request message. */
export function requestMessage(id: RequestId, method: string, params: unknown): RpcMessage {
  return { kind: 'request', id, method, params };
}

/** Builds a notification message. */
export function notificationMessage(method: string, params: unknown): RpcMessage {
  return { kind: 'notification', method, params };
}

/** Builds a success response. */
export function responseMessage(id: RequestId, result: unknown): RpcMessage {
  return { kind: 'response', id, result };
}

/** Builds an error response from anything thrown; id -1 when the request could not be read. */
export function errorMessage(id: RequestId | null, thrown: unknown): RpcMessage {
  return { kind: 'error', id: id ?? -1, error: toWireError(thrown) };
}
