import * as v from 'valibot';
import { parseBase64 } from '../bytes.ts';

/**
 * An optional field: absent and `null` are both accepted (as the original's serde `Option`),
 * and both read as `undefined` in memory.
 */
export function opt<const TSchema extends v.GenericSchema>(schema: TSchema) {
  return v.pipe(
    v.nullish(schema),
    v.transform((value) => (value === null ? undefined : value) as v.InferOutput<TSchema> | undefined),
  );
}

/**
 * An optional field with a default used when it is absent or `null` (the original's
 * `#[serde(default)]`; the original refuses an explicit `null` there, execd accepts it).
 * The key is always present in memory.
 */
export function withDefault<
  const TSchema extends v.GenericSchema,
  const TDefault extends v.InferInput<TSchema>,
>(schema: TSchema, fallback: TDefault) {
  return v.nullish(schema, fallback);
}

/**
 * A nullable field (the original's `Option<T>` that is always serialized): absent and `null` both
 * read as `null`, so the key is always present in memory and re-encodes as `null`.
 */
export function orNull<const TSchema extends v.GenericSchema>(schema: TSchema) {
  return v.nullish(schema, null);
}

/**
 * Raw bytes. In memory always a `Uint8Array`; on the msgpack codec a `bin`; on the JSON codec a
 * standard padded base64 string (decoded here, so both codecs produce the same value).
 */
export const Bytes = v.union(
  [
    // v.custom, not v.instance: the in-memory type is exactly `Uint8Array` (any backing buffer).
    v.custom<Uint8Array>((input) => input instanceof Uint8Array, 'expected a Uint8Array'),
    v.pipe(
      v.string(),
      // Check and decode in one pass: decoding is most of the cost of a large chunk.
      v.rawTransform(({ dataset, addIssue, NEVER }) => {
        const bytes = parseBase64(dataset.value);
        if (bytes) return bytes;
        addIssue({ message: 'expected standard padded base64' });
        return NEVER;
      }),
    ),
  ],
  'expected bytes (msgpack bin or base64 string)',
);

/** Unsigned integer that fits a JS number exactly (the original's u64/usize). */
export const UInt = v.pipe(v.number(), v.safeInteger(), v.minValue(0));

/** Signed 32-bit integer (the original's i32 exit codes). */
export const Int32 = v.pipe(v.number(), v.integer(), v.minValue(-2147483648), v.maxValue(2147483647));

/**
 * Caller-chosen handle for a managed process, unique within a session. Not an OS pid.
 * The original accepts any string, so this does too (length is bounded by the frame limit).
 */
export const ProcessId = v.string();
export type ProcessId = v.InferOutput<typeof ProcessId>;

/** Per-process event counter shared by output, exit and close events; the first event is 1. */
export const Seq = v.pipe(v.number(), v.safeInteger(), v.minValue(1));

/** An absolute `file://` URI naming a path on the executor's host (native paths are rejected). */
export const PathUri = v.string();
export type PathUri = v.InferOutput<typeof PathUri>;

/** A shell as reported by an environment or requested for a snapshot. */
export const ShellInfo = v.object({
  /** `bash`, `zsh`, `sh`, `powershell` or `cmd`. */
  name: v.string(),
  /** Absolute path of the shell binary on the executor. */
  path: v.string(),
});
export type ShellInfo = v.InferOutput<typeof ShellInfo>;

/**
 * Empty params/result: `{}`, `null` or absent (extra members ignored). An array is refused, as
 * the original refuses `[]` for its unit params (`invalid type: sequence, expected unit`).
 */
export const Empty = v.pipe(
  v.custom<object | null | undefined>(
    (input) =>
      input == null || (typeof input === 'object' && !Array.isArray(input) && !(input instanceof Uint8Array)),
    'invalid type: expected `{}` or null',
  ),
  v.transform(() => ({}) as Record<string, never>),
);
