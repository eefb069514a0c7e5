// Fast msgpack encoders for the one frame that carries nearly every byte the server sends: the
// `process/output` notification (and the execd `process/outputBatch` extension). They write the
// same bytes as the generic codec (tests compare them), but with one allocation and one copy of
// the chunk per frame (the generic encoder copies each chunk twice: into its scratch buffer, then
// out of it), or, for a batch, as parts whose chunks are not copied at all. The JSON ones are in
// `output-frames-json.ts`.
import type { RpcMessage } from '../schemas/envelope.ts';
import {
  batchParams,
  type OutputBatchParams,
  type OutputFrameChunk,
  type OutputFrameWriter,
  type OutputParams,
  outputParams,
} from './output-params.ts';

const textEncoder = new TextEncoder();

/**
 * A msgpack writer over exactly sized memory (sizes are computed first, then written): a buffer
 * of its own, or a place in the caller's.
 */
class MsgpackWriter {
  readonly bytes: Uint8Array;
  readonly #view: DataView;
  #pos: number;

  /** Writes into `bytes` from `at` on. */
  constructor(bytes: Uint8Array, at = 0) {
    this.bytes = bytes;
    this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.#pos = at;
  }

  static sized(size: number): MsgpackWriter {
    return new MsgpackWriter(new Uint8Array(size));
  }

  get pos(): number {
    return this.#pos;
  }

  u8(value: number): void {
    this.bytes[this.#pos++] = value;
  }

  /** A string header + its UTF-8 bytes (as @msgpack/msgpack writes them). */
  str(utf8: Uint8Array): void {
    const n = utf8.byteLength;
    if (n < 32) this.u8(0xa0 | n);
    else if (n < 0x100) this.#head8(0xd9, n);
    else if (n < 0x10000) this.#head16(0xda, n);
    else this.#head32(0xdb, n);
    this.bytes.set(utf8, this.#pos);
    this.#pos += n;
  }

  /** A non-negative safe integer, in the smallest form @msgpack/msgpack picks. */
  uint(value: number): void {
    if (value < 0x80) this.u8(value);
    else if (value < 0x100) this.#head8(0xcc, value);
    else if (value < 0x10000) this.#head16(0xcd, value);
    else if (value < 0x100000000) this.#head32(0xce, value);
    else {
      this.u8(0xcf);
      this.#view.setUint32(this.#pos, Math.floor(value / 0x100000000));
      this.#view.setUint32(this.#pos + 4, value >>> 0);
      this.#pos += 8;
    }
  }

  bin(bytes: Uint8Array): void {
    this.binHeader(bytes.byteLength);
    this.bytes.set(bytes, this.#pos);
    this.#pos += bytes.byteLength;
  }

  /** The header of a bin of `n` bytes (the bytes themselves follow it). */
  binHeader(n: number): void {
    if (n < 0x100) this.#head8(0xc4, n);
    else if (n < 0x10000) this.#head16(0xc5, n);
    else this.#head32(0xc6, n);
  }

  array(length: number): void {
    if (length < 16) this.u8(0x90 | length);
    else if (length < 0x10000) this.#head16(0xdc, length);
    else this.#head32(0xdd, length);
  }

  #head8(type: number, value: number): void {
    this.u8(type);
    this.u8(value);
  }

  #head16(type: number, value: number): void {
    this.u8(type);
    this.#view.setUint16(this.#pos, value);
    this.#pos += 2;
  }

  #head32(type: number, value: number): void {
    this.u8(type);
    this.#view.setUint32(this.#pos, value);
    this.#pos += 4;
  }
}

function strSize(utf8: Uint8Array): number {
  const n = utf8.byteLength;
  return n + (n < 32 ? 1 : n < 0x100 ? 2 : n < 0x10000 ? 3 : 5);
}

function uintSize(value: number): number {
  return value < 0x80 ? 1 : value < 0x100 ? 2 : value < 0x10000 ? 3 : value < 0x100000000 ? 5 : 9;
}

function binSize(n: number): number {
  return n + (n < 0x100 ? 2 : n < 0x10000 ? 3 : 5);
}

function arraySize(n: number): number {
  return n < 16 ? 1 : n < 0x10000 ? 3 : 5;
}

// Keys and fixed strings, encoded once.
const KEY = Object.fromEntries(
  [
    'method',
    'params',
    'processId',
    'seq',
    'stream',
    'chunk',
    'chunks',
    'process/output',
    'process/outputBatch',
  ].map((key) => [key, textEncoder.encode(key)]),
) as Record<string, Uint8Array>;
const streamNames = new Map<string, Uint8Array>();
function streamName(stream: string): Uint8Array {
  let utf8 = streamNames.get(stream);
  if (utf8 === undefined) {
    utf8 = textEncoder.encode(stream);
    // Only the protocol's few stream names are cached; anything else is encoded each time.
    if (streamNames.size < 8) streamNames.set(stream, utf8);
  }
  return utf8;
}

/** The last process id encoded: a stream's frames all carry the same one. Never written to. */
let lastId = '';
let lastIdBytes: Uint8Array = new Uint8Array(0);
function processIdBytes(processId: string): Uint8Array {
  if (processId !== lastId) {
    lastIdBytes = textEncoder.encode(processId);
    lastId = processId;
  }
  return lastIdBytes;
}

function chunkFieldsSize(c: OutputFrameChunk): number {
  return (
    strSize(KEY.seq!) +
    uintSize(c.seq) +
    strSize(KEY.stream!) +
    strSize(streamName(c.stream)) +
    strSize(KEY.chunk!) +
    binSize(c.chunk.byteLength)
  );
}

function writeChunkFields(w: MsgpackWriter, c: OutputFrameChunk): void {
  w.str(KEY.seq!);
  w.uint(c.seq);
  w.str(KEY.stream!);
  w.str(streamName(c.stream));
  w.str(KEY.chunk!);
  w.bin(c.chunk);
}

function outputSize(id: Uint8Array, p: OutputParams): number {
  return (
    1 +
    strSize(KEY.method!) +
    strSize(KEY['process/output']!) +
    strSize(KEY.params!) +
    1 +
    strSize(KEY.processId!) +
    strSize(id) +
    chunkFieldsSize(p)
  );
}

/** Writes what {@link outputSize} counts. */
function writeOutput(w: MsgpackWriter, id: Uint8Array, p: OutputParams): void {
  w.u8(0x82);
  w.str(KEY.method!);
  w.str(KEY['process/output']!);
  w.str(KEY.params!);
  w.u8(0x84);
  w.str(KEY.processId!);
  w.str(id);
  writeChunkFields(w, p);
}

/** Bytes of a `process/outputBatch` frame before its first chunk: `{method, params: {processId, chunks: [`. */
function batchHeadSize(id: Uint8Array, chunks: number): number {
  const method = KEY['process/outputBatch']!;
  return (
    1 +
    strSize(KEY.method!) +
    strSize(method) +
    strSize(KEY.params!) +
    1 +
    strSize(KEY.processId!) +
    strSize(id) +
    strSize(KEY.chunks!) +
    arraySize(chunks)
  );
}

/** Writes what {@link batchHeadSize} counts. */
function writeBatchHead(w: MsgpackWriter, id: Uint8Array, chunks: number): void {
  w.u8(0x82);
  w.str(KEY.method!);
  w.str(KEY['process/outputBatch']!);
  w.str(KEY.params!);
  w.u8(0x82);
  w.str(KEY.processId!);
  w.str(id);
  w.str(KEY.chunks!);
  w.array(chunks);
}

function batchSize(id: Uint8Array, p: OutputBatchParams): number {
  let size = batchHeadSize(id, p.chunks.length);
  for (const c of p.chunks) size += 1 + chunkFieldsSize(c);
  return size;
}

function writeBatch(w: MsgpackWriter, id: Uint8Array, p: OutputBatchParams): void {
  writeBatchHead(w, id, p.chunks.length);
  for (const c of p.chunks) {
    w.u8(0x83);
    writeChunkFields(w, c);
  }
}

/**
 * The msgpack frame of a `process/outputBatch` notification as parts to be written one after the
 * other (WebSocket fragments of one message): the small headers, and each chunk's own memory in
 * between, never copied. Undefined for any other message. The parts' concatenation is exactly
 * what `fastOutputMsgpack` returns.
 */
export function outputBatchMsgpackParts(message: RpcMessage): Uint8Array[] | undefined {
  const p = batchParams(message);
  if (p === undefined || p.chunks.length === 0) return undefined;
  const id = processIdBytes(p.processId);
  const lead = batchHeadSize(id, p.chunks.length);
  // Every header in one buffer: each chunk's fields up to (and including) its bin header.
  let size = lead;
  for (const c of p.chunks) size += 1 + chunkFieldsSize(c) - c.chunk.byteLength;
  const w = MsgpackWriter.sized(size);
  writeBatchHead(w, id, p.chunks.length);
  const parts: Uint8Array[] = [];
  let start = 0;
  for (const c of p.chunks) {
    w.u8(0x83);
    w.str(KEY.seq!);
    w.uint(c.seq);
    w.str(KEY.stream!);
    w.str(streamName(c.stream));
    w.str(KEY.chunk!);
    w.binHeader(c.chunk.byteLength);
    parts.push(w.bytes.subarray(start, w.pos), c.chunk);
    start = w.pos;
  }
  return parts;
}

/** The msgpack frame of an output notification via the fast path, or undefined for any other message. */
export function fastOutputMsgpack(message: RpcMessage): Uint8Array | undefined {
  const writer = outputMsgpackWriter(message);
  if (writer === undefined) return undefined;
  const bytes = new Uint8Array(writer.size);
  writer.write(bytes, 0);
  return bytes;
}

/**
 * An output notification's msgpack frame as its size and a writer that puts exactly those bytes
 * (what {@link fastOutputMsgpack} returns) at `target[at]`, each chunk copied once, straight into
 * the caller's memory: for a transport that lays many frames out in one buffer. Undefined for
 * any other message.
 */
export function outputMsgpackWriter(message: RpcMessage): OutputFrameWriter | undefined {
  const output = outputParams(message);
  if (output !== undefined) {
    const id = processIdBytes(output.processId);
    return {
      size: outputSize(id, output),
      write: (target, at) => writeOutput(new MsgpackWriter(target, at), id, output),
    };
  }
  const batch = batchParams(message);
  if (batch === undefined) return undefined;
  const id = processIdBytes(batch.processId);
  return {
    size: batchSize(id, batch),
    write: (target, at) => writeBatch(new MsgpackWriter(target, at), id, batch),
  };
}
