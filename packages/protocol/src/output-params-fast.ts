// The params of the two notifications that carry nearly every byte a client receives
// (`process/output`, `process/outputBatch`), checked without building a copy of each chunk when
// they are exactly what the schemas accept and output: the members the schema lists, in its
// order, nothing else, every value valid. Anything else returns undefined and the schema decides
// (its errors, its output). The stream names are the schema's own; a test holds both to the
// same results.

import { BATCH_KEYS, CHUNK_KEYS, hasExactKeys, OUTPUT_KEYS } from './codec/output-params.ts';
import type { ExecOutputDeltaNotification, ProcessOutputBatchNotification } from './schemas/process.ts';
import { OutputStream } from './schemas/process.ts';

const STREAMS: ReadonlySet<unknown> = new Set(OutputStream.options);

function validChunk(c: { seq?: unknown; stream?: unknown; chunk?: unknown }): boolean {
  return (
    typeof c.seq === 'number' &&
    Number.isSafeInteger(c.seq) &&
    c.seq >= 1 &&
    STREAMS.has(c.stream) &&
    c.chunk instanceof Uint8Array
  );
}

function plainRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** `process/output` params that need no copy (the value itself), or undefined. */
export function plainOutputParams(raw: unknown): ExecOutputDeltaNotification | undefined {
  if (!plainRecord(raw) || !hasExactKeys(raw, OUTPUT_KEYS)) return undefined;
  if (typeof raw.processId !== 'string' || !validChunk(raw)) return undefined;
  return raw as ExecOutputDeltaNotification;
}

/** `process/outputBatch` params that need no copy (the value itself), or undefined. */
export function plainOutputBatchParams(raw: unknown): ProcessOutputBatchNotification | undefined {
  if (!plainRecord(raw) || !hasExactKeys(raw, BATCH_KEYS)) return undefined;
  const { processId, chunks } = raw;
  if (typeof processId !== 'string' || !Array.isArray(chunks)) return undefined;
  for (const c of chunks)
    if (!plainRecord(c) || !hasExactKeys(c, CHUNK_KEYS) || !validChunk(c)) return undefined;
  return raw as ProcessOutputBatchNotification;
}
