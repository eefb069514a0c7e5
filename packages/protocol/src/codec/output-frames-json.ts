// Fast JSON encoders for the output notifications: `process/output` (the original's frame, one
// chunk each) and the execd `process/outputBatch` extension (several chunks of one process, each
// with its own seq, for a client that asked for it in `initialize`). The same text as the generic
// codec (tests compare them), with the base64 written straight from each chunk's memory into the
// frame: one allocation per frame, no placeholder pass, no string as long as the frame.
import { encodeBase64, utf8WithBase64, utf8WithBase64Size, writeUtf8WithBase64 } from '../bytes.ts';
import type { RpcMessage } from '../schemas/envelope.ts';
import {
  batchParams,
  type OutputBatchParams,
  type OutputFrameChunk,
  type OutputFrameWriter,
  outputParams,
} from './output-params.ts';

/** What follows the base64 chunk of a `process/output` notification's JSON. */
const OUTPUT_JSON_TAIL = '"}}';
/** What follows a batch's last chunk. */
const BATCH_JSON_TAIL = ']}}';

/**
 * The frame as its pieces: strings (JSON text) and chunks (written as their base64), or undefined
 * for a message the fast path does not write.
 */
function outputJsonPieces(message: RpcMessage): (string | Uint8Array)[] | undefined {
  const p = outputParams(message);
  if (p !== undefined) {
    return [
      `{"method":"process/output","params":{"processId":${JSON.stringify(p.processId)},${chunkHead(p)}`,
      p.chunk,
      OUTPUT_JSON_TAIL,
    ];
  }
  const batch = batchParams(message);
  return batch === undefined ? undefined : batchPieces(batch);
}

/** A chunk's members up to the opening quote of its base64. */
function chunkHead(c: OutputFrameChunk): string {
  return `"seq":${c.seq},"stream":${JSON.stringify(c.stream)},"chunk":"`;
}

function batchPieces(p: OutputBatchParams): (string | Uint8Array)[] {
  const pieces: (string | Uint8Array)[] = [
    `{"method":"process/outputBatch","params":{"processId":${JSON.stringify(p.processId)},"chunks":[`,
  ];
  let separator = '{';
  for (const c of p.chunks) {
    pieces.push(`${separator}${chunkHead(c)}`, c.chunk);
    separator = '"},{';
  }
  pieces.push(p.chunks.length === 0 ? BATCH_JSON_TAIL : `"}${BATCH_JSON_TAIL}`);
  return pieces;
}

/**
 * The JSON text of an output notification via the fast path (base64 straight from the chunks'
 * memory, no placeholder pass), or undefined for any other message.
 */
export function fastOutputJsonText(message: RpcMessage): string | undefined {
  const pieces = outputJsonPieces(message);
  if (pieces === undefined) return undefined;
  let text = '';
  for (const piece of pieces) text += typeof piece === 'string' ? piece : encodeBase64(piece);
  return text;
}

/**
 * The JSON frame (UTF-8 bytes) of an output notification, written in one allocation: what a
 * transport sends as a text frame without turning a string into bytes first. Undefined for any
 * other message. The same bytes as the UTF-8 of {@link fastOutputJsonText}.
 */
export function fastOutputJsonBytes(message: RpcMessage): Uint8Array | undefined {
  const pieces = outputJsonPieces(message);
  return pieces === undefined ? undefined : utf8WithBase64(pieces);
}

/**
 * An output notification's JSON frame as its size and a writer that puts exactly those bytes
 * (what {@link fastOutputJsonBytes} returns) at `target[at]`: for a transport that lays many
 * frames out in memory of its own. Undefined for any other message.
 */
export function outputJsonWriter(message: RpcMessage): OutputFrameWriter | undefined {
  const pieces = outputJsonPieces(message);
  if (pieces === undefined) return undefined;
  return {
    size: utf8WithBase64Size(pieces),
    write: (target, at) => void writeUtf8WithBase64(pieces, target, at),
  };
}
