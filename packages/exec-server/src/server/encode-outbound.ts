import { errorMessage, type Logger, RpcError, type RpcMessage } from '@execd/protocol';

/**
 * Encodes an outbound message with `encode`. If that fails (a value the codec cannot represent),
 * the failure is logged and a response is replaced by a -32603 error for the same id, so the
 * client is never left waiting; a notification is dropped (undefined).
 */
export function encodeOutbound<TFrame>(
  message: RpcMessage,
  encode: (message: RpcMessage) => TFrame,
  context: { readonly logger: Logger; readonly connection: string },
): TFrame | undefined {
  try {
    return encode(message);
  } catch (error) {
    context.logger.error('failed to serialise outbound message', { connection: context.connection, error });
    if (message.kind !== 'response') return undefined;
    return encode(errorMessage(message.id, new RpcError('internal', 'failed to serialize response')));
  }
}
