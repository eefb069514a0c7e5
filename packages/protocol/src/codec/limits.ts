/** Limits applied to every inbound frame before (or while) it is decoded. */
export interface DecodeLimits {
  /** Largest frame accepted, in bytes. */
  readonly maxFrameBytes: number;
  /** Most values (scalars, arrays, objects, keys excluded) in one message. */
  readonly maxValues: number;
  /** Deepest nesting of arrays/objects. */
  readonly maxDepth: number;
  /** Longest string, in bytes (msgpack) or UTF-16 units (JSON). */
  readonly maxStringLength: number;
  /** Longest byte field (msgpack `bin`). */
  readonly maxBinLength: number;
}

/** 64 MiB: the original's `MAX_STDIO_JSONRPC_MESSAGE_LEN`; a 1 MiB replay in base64 fits easily. */
export const MAX_FRAME_BYTES = 64 * 1024 * 1024;
/** The original's `MAX_JSONRPC_VALUE_NODES`: a full 50,000-chunk replay fits under it. */
export const MAX_VALUES_PER_MESSAGE = 256 * 1024;
/** serde_json's recursion limit, which the original inherits. */
export const MAX_NESTING_DEPTH = 128;

export const DEFAULT_DECODE_LIMITS: DecodeLimits = {
  maxFrameBytes: MAX_FRAME_BYTES,
  maxValues: MAX_VALUES_PER_MESSAGE,
  maxDepth: MAX_NESTING_DEPTH,
  maxStringLength: MAX_FRAME_BYTES,
  maxBinLength: MAX_FRAME_BYTES,
};

/** Fills unspecified limits with the defaults. */
export function resolveLimits(partial?: Partial<DecodeLimits>): DecodeLimits {
  return { ...DEFAULT_DECODE_LIMITS, ...partial };
}
