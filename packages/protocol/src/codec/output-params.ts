// What the fast output encoders accept: the params of `process/output` and `process/outputBatch`
// notifications in exactly the wire shape the generic encoders would write (members in this
// order, nothing else). Anything else is left to the generic path.
import type { RpcMessage } from '../schemas/envelope.ts';

/** One output chunk as the fast encoders take it. */
export interface OutputFrameChunk {
  readonly seq: number;
  readonly stream: string;
  readonly chunk: Uint8Array;
}

/** `process/output` params, when they have exactly the wire shape (else undefined: generic path). */
export interface OutputParams extends OutputFrameChunk {
  readonly processId: string;
}

/** `process/outputBatch` params (see `METHODS`): one process's consecutive chunks. */
export interface OutputBatchParams {
  readonly processId: string;
  readonly chunks: readonly OutputFrameChunk[];
}

/** The members of each output record, in the order the generic encoders write them. */
export const OUTPUT_KEYS: readonly string[] = ['processId', 'seq', 'stream', 'chunk'];
export const BATCH_KEYS: readonly string[] = ['processId', 'chunks'];
export const CHUNK_KEYS: readonly string[] = ['seq', 'stream', 'chunk'];

/** `value`'s own enumerable members are exactly `expected`, in that order. */
export function hasExactKeys(value: object, expected: readonly string[]): boolean {
  const keys = Object.keys(value);
  if (keys.length !== expected.length) return false;
  for (let i = 0; i < keys.length; i++) if (keys[i] !== expected[i]) return false;
  return true;
}

function isChunk(value: unknown): value is OutputFrameChunk {
  const c = value as Partial<OutputFrameChunk> | null;
  return (
    typeof c === 'object' &&
    c !== null &&
    Number.isSafeInteger(c.seq) &&
    (c.seq as number) >= 0 &&
    typeof c.stream === 'string' &&
    c.chunk instanceof Uint8Array
  );
}

/** The params of a `process/output` notification the fast path can write byte for byte, or undefined. */
export function outputParams(message: RpcMessage): OutputParams | undefined {
  if (message.kind !== 'notification' || message.method !== 'process/output' || message.trace !== undefined)
    return undefined;
  const p = message.params as Partial<OutputParams> | null;
  if (!isChunk(p) || typeof (p as Partial<OutputParams>).processId !== 'string') return undefined;
  // The generic encoders write the members in insertion order: only that exact order matches.
  return hasExactKeys(p as object, OUTPUT_KEYS) ? (p as OutputParams) : undefined;
}

export function batchParams(message: RpcMessage): OutputBatchParams | undefined {
  if (
    message.kind !== 'notification' ||
    message.method !== 'process/outputBatch' ||
    message.trace !== undefined
  )
    return undefined;
  const p = message.params as Partial<OutputBatchParams> | null;
  if (typeof p !== 'object' || p === null || typeof p.processId !== 'string' || !Array.isArray(p.chunks))
    return undefined;
  if (!hasExactKeys(p, BATCH_KEYS)) return undefined;
  for (const c of p.chunks) if (!isChunk(c) || !hasExactKeys(c, CHUNK_KEYS)) return undefined;
  return p as OutputBatchParams;
}

/** A frame to be written into memory the caller owns (see `Codec.encodeInto`). */
export interface OutputFrameWriter {
  /** The frame's length in bytes. */
  readonly size: number;
  /** Writes the frame at `target[at]`; `target` has room for `size` bytes there. */
  write(target: Uint8Array, at: number): void;
}
