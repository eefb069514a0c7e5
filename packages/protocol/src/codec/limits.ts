/** Limits applied to every inbound frame before (or while) it is decoded. */
export interface DecodeLimits {
  /**
   * Largest frame accepted, in bytes (for a frame given as a JS string: its length in UTF-16
   * units). Checked before anything else is looked at.
   */
  readonly maxFrameBytes: number;
  /** Most values in one message: the root, every array element and every map value; keys excluded. */
  readonly maxValues: number;
  /** Most nested containers (arrays and maps); the root object counts as one. */
  readonly maxDepth: number;
  /** Longest string, in bytes (msgpack) or in escaped UTF-16 units as written (JSON). */
  readonly maxStringLength: number;
  /** Longest byte field (msgpack `bin`). */
  readonly maxBinLength: number;
}

/** 64 MiB: the original's `MAX_STDIO_JSONRPC_MESSAGE_LEN`; a 1 MiB replay in base64 fits easily. */
export const MAX_FRAME_BYTES = 64 * 1024 * 1024;
/** The original's `MAX_JSONRPC_VALUE_NODES`: a full 50,000-chunk replay fits under it. */
export const MAX_VALUES_PER_MESSAGE = 256 * 1024;
/**
 * The original inherits serde_json's recursion limit (128), which admits at most 127 nested
 * containers: measured against Codex CLI 0.169, depth 127 decodes and depth 128 is refused.
 */
export const MAX_NESTING_DEPTH = 127;

/** The limits every codec applies unless told otherwise: the original's, and 64 MiB per string/bin. */
export const DEFAULT_DECODE_LIMITS: DecodeLimits = {
  maxFrameBytes: MAX_FRAME_BYTES,
  maxValues: MAX_VALUES_PER_MESSAGE,
  maxDepth: MAX_NESTING_DEPTH,
  maxStringLength: MAX_FRAME_BYTES,
  maxBinLength: MAX_FRAME_BYTES,
};

/** Fills unspecified limits with the defaults; a limit that is not a positive integer is a bug. */
export function resolveLimits(partial?: Partial<DecodeLimits>): DecodeLimits {
  const limits: { -readonly [K in keyof DecodeLimits]: number } = { ...DEFAULT_DECODE_LIMITS };
  for (const name of Object.keys(DEFAULT_DECODE_LIMITS) as (keyof DecodeLimits)[]) {
    const value: unknown = partial?.[name];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
      throw new RangeError(`decode limit \`${name}\` must be a positive integer, got ${String(value)}`);
    }
    limits[name] = value;
  }
  return limits;
}
