import { classifyMessage, toWireObject } from '../envelope.ts';
import { ExecError, RpcError } from '../errors.ts';
import type { RpcMessage } from '../schemas/envelope.ts';
import { decodeJson, encodeJson, encodeJsonText } from './json.ts';
import { type DecodeLimits, resolveLimits } from './limits.ts';
import { decodeMsgpack, encodeMsgpack } from './msgpack.ts';
import { decodeOutputBatchFragments } from './output-batch-fragments.ts';
import { fastOutputMsgpack, outputBatchMsgpackParts, outputMsgpackWriter } from './output-frames.ts';
import { decodeOutputBatchJsonFrame, decodeOutputJsonFrame } from './output-frames-decode.ts';
import { fastOutputJsonBytes, fastOutputJsonText, outputJsonWriter } from './output-frames-json.ts';
import type { OutputFrameWriter } from './output-params.ts';

/** The two wire codecs: `json` (the original's) and `msgpack` (execd's native one). */
export type CodecName = 'json' | 'msgpack';

/** Turns messages into frames and back. Both codecs produce the same in-memory values. */
export interface Codec {
  readonly name: CodecName;
  /** `true` when frames travel as WebSocket binary frames. */
  readonly binary: boolean;
  /**
   * Encodes one message (bytes as `Uint8Array`). A value the codec cannot write (a cycle, a
   * BigInt, nesting past 100 levels in msgpack) throws RpcError `internal`.
   */
  encode(message: RpcMessage): Uint8Array;
  /**
   * Encodes one message as parts whose concatenation is its frame, the large byte fields as
   * themselves (no copy), for a transport that can send a frame in pieces (WebSocket fragments).
   * Undefined when the codec has no such form for this message: use `encode`. Today: msgpack
   * `process/outputBatch` notifications.
   */
  encodeParts(message: RpcMessage): Uint8Array[] | undefined;
  /**
   * An output notification (`process/output`, `process/outputBatch`) as its frame's size and a
   * writer that lays the frame out in memory the caller owns (a transport writing many frames in
   * one buffer); undefined for any other message: use `encode`. The bytes are `encode`'s.
   */
  encodeInto(message: RpcMessage): OutputFrameWriter | undefined;
  /** Encodes one message as text (json codec only; msgpack throws ExecError `unsupported`). */
  encodeText(message: RpcMessage): string;
  /**
   * Decodes and classifies one frame; throws FrameDecodeError (-32600) on anything malformed, and
   * nothing else. Params and results are not validated here: see `decodeParams`/`decodeResult`.
   */
  decode(frame: Uint8Array | string): RpcMessage;
  /**
   * `decode` of the frame the fragments make when joined (a WebSocket message that arrived in
   * several fragments), without joining them when the codec can read them as they are (msgpack
   * `process/outputBatch`: its chunks become views of the fragments).
   */
  decodeFragments(fragments: readonly Uint8Array[]): RpcMessage;
  /** Decodes to a plain value without classifying it (for raw tooling and tests); same limits. */
  decodeValue(frame: Uint8Array | string): unknown;
}

/** Runs an encoder, turning its failures into RpcError `internal` (what a server would answer). */
function encoding<T>(codec: CodecName, encode: () => T): T {
  try {
    return encode();
  } catch (cause) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    throw new RpcError('internal', `failed to serialize ${codec} message: ${detail}`, { cause });
  }
}

/** Creates the JSON codec: UTF-8 JSON text, bytes as padded base64 (the original's dialect). */
export function createJsonCodec(limits?: Partial<DecodeLimits>): Codec {
  const resolved = resolveLimits(limits);
  const decode = (frame: Uint8Array | string): RpcMessage =>
    classifyMessage(
      (typeof frame !== 'string'
        ? (decodeOutputJsonFrame(frame, resolved) ?? decodeOutputBatchJsonFrame(frame, resolved))
        : undefined) ?? decodeJson(frame, resolved, true),
    );
  return {
    name: 'json',
    binary: false,
    encode: (message) =>
      encoding('json', () => fastOutputJsonBytes(message) ?? encodeJson(toWireObject(message))),
    encodeParts: () => undefined,
    encodeInto: (message) => encoding('json', () => outputJsonWriter(message)),
    encodeText: (message) =>
      encoding('json', () => fastOutputJsonText(message) ?? encodeJsonText(toWireObject(message))),
    decode,
    decodeValue: (frame) => decodeJson(frame, resolved),
    decodeFragments: (fragments) => decode(joinFragments(fragments)),
  };
}

/** Creates the msgpack codec: one message per binary frame, bytes as msgpack `bin`. */
export function createMsgpackCodec(limits?: Partial<DecodeLimits>): Codec {
  const resolved = resolveLimits(limits);
  const asBytes = (frame: Uint8Array | string): Uint8Array =>
    typeof frame === 'string' ? new TextEncoder().encode(frame) : frame;
  return {
    name: 'msgpack',
    binary: true,
    encode: (message) =>
      encoding('msgpack', () => fastOutputMsgpack(message) ?? encodeMsgpack(toWireObject(message))),
    encodeParts: (message) => encoding('msgpack', () => outputBatchMsgpackParts(message)),
    encodeInto: (message) => encoding('msgpack', () => outputMsgpackWriter(message)),
    encodeText: () => {
      throw new ExecError('unsupported', 'the msgpack codec has no text form');
    },
    decode: (frame) => classifyMessage(decodeMsgpack(asBytes(frame), resolved)),
    decodeValue: (frame) => decodeMsgpack(asBytes(frame), resolved),
    decodeFragments: (fragments) =>
      classifyMessage(
        (fragments.length > 1 ? decodeOutputBatchFragments(fragments, resolved) : undefined) ??
          decodeMsgpack(joinFragments(fragments), resolved),
      ),
  };
}

/** The fragments as one frame (the only one itself, not a copy). */
function joinFragments(fragments: readonly Uint8Array[]): Uint8Array {
  if (fragments.length === 1) return fragments[0]!;
  let length = 0;
  for (const fragment of fragments) length += fragment.byteLength;
  const frame = new Uint8Array(length);
  let at = 0;
  for (const fragment of fragments) {
    frame.set(fragment, at);
    at += fragment.byteLength;
  }
  return frame;
}

/**
 * Picks the codec for an inbound WebSocket frame: text frames are JSON; binary frames are msgpack
 * unless they start with `{` (after optional whitespace), which the original's clients send as
 * JSON in binary frames. A msgpack message is a map (0x80-0x8f, 0xde, 0xdf), never 0x7b.
 */
export function sniffCodec(frame: Uint8Array | string, isBinary: boolean): CodecName {
  if (!isBinary || typeof frame === 'string') return 'json';
  for (let i = 0; i < frame.length; i++) {
    const b = frame[i]!;
    if (b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d) continue;
    return b === 0x7b ? 'json' : 'msgpack';
  }
  return 'msgpack';
}

export {
  DEFAULT_DECODE_LIMITS,
  type DecodeLimits,
  MAX_FRAME_BYTES,
  MAX_NESTING_DEPTH,
  MAX_VALUES_PER_MESSAGE,
} from './limits.ts';
export type { OutputFrameWriter } from './output-params.ts';
