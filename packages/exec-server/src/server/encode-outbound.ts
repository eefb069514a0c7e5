import {
  type Codec,
  type CodecName,
  errorMessage,
  type Logger,
  type OutputFrameWriter,
  RpcError,
  type RpcMessage,
} from '@execd/protocol';

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

/**
 * A connection's outbound messages as frames, in the forms its transport can send: a whole frame
 * (`frame`), an output frame laid out in the transport's memory (`laidOut`), a msgpack
 * `process/outputBatch` as zero-copy parts (`parts`). `laidOut` and `parts` return undefined when
 * the message has no such form (or failed to encode in it: `frame` then reports the failure).
 */
export class OutboundEncoder {
  readonly #codecs: Readonly<Record<CodecName, Codec>>;
  readonly #context: { readonly logger: Logger; readonly connection: string };

  constructor(codecs: Readonly<Record<CodecName, Codec>>, context: { logger: Logger; connection: string }) {
    this.#codecs = codecs;
    this.#context = context;
  }

  /** The frame; JSON as text unless `bytes` (UTF-8 bytes for a text frame). */
  frame(message: RpcMessage, codec: CodecName, bytes = false): string | Uint8Array | undefined {
    const impl = this.#codecs[codec];
    const encode = (m: RpcMessage): string | Uint8Array =>
      codec === 'json' && !bytes ? impl.encodeText(m) : impl.encode(m);
    return encodeOutbound(message, encode, this.#context);
  }

  laidOut(message: RpcMessage, codec: CodecName): OutputFrameWriter | undefined {
    try {
      return this.#codecs[codec].encodeInto(message);
    } catch {
      return undefined;
    }
  }

  parts(message: RpcMessage): Uint8Array[] | undefined {
    try {
      return this.#codecs.msgpack.encodeParts(message);
    } catch {
      return undefined;
    }
  }
}

export function byteLengthOf(parts: readonly Uint8Array[]): number {
  let total = 0;
  for (const part of parts) total += part.byteLength;
  return total;
}
