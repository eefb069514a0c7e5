import * as v from 'valibot';
import { DEFAULT_WRITE_STDIN_YIELD_TIME_MS } from '../constants.ts';
import { type ArgsParseResult, PARSE_ERROR_PREFIX, parseFailure } from './exec-command-args.ts';
import { type FieldReader, integerField, readDocument, stringField } from './serde-fields.ts';

/** Parsed `write_stdin` arguments, defaults applied (`chars` '', `yield_time_ms` 250). */
export interface WriteStdinArgs {
  /** The model-facing name of the process id. */
  session_id: number;
  chars: string;
  yield_time_ms: number;
  /** Absent means 10,000 at formatting time. */
  max_output_tokens?: number;
}

const SESSION_FIELDS: Record<string, FieldReader> = { session_id: integerField('i32', false) };

const WRITE_STDIN_FIELDS: Record<string, FieldReader> = {
  session_id: integerField('i32', false),
  chars: stringField(true),
  yield_time_ms: integerField('u64', false),
  max_output_tokens: integerField('usize', true),
};

const WriteStdinArgsSchema = v.object({
  session_id: v.number(),
  chars: v.optional(v.string(), ''),
  yield_time_ms: v.optional(v.number(), DEFAULT_WRITE_STDIN_YIELD_TIME_MS),
  max_output_tokens: v.exactOptional(v.number()),
});

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const schemaMatchesInterface: Same<v.InferOutput<typeof WriteStdinArgsSchema>, WriteStdinArgs> = true;
void schemaMatchesInterface;

/**
 * Parses `write_stdin` arguments as the original does and never throws: first the session
 * lookup struct (`TerminalSessionArgs`), then the full one, with serde's error texts.
 */
export function parseWriteStdinArgs(input: unknown): ArgsParseResult<WriteStdinArgs> {
  const text = typeof input === 'string' ? input : (JSON.stringify(input) ?? '');
  let raw: Record<string, unknown>;
  try {
    readDocument(text, 'TerminalSessionArgs', SESSION_FIELDS, ['session_id']);
    raw = readDocument(text, 'WriteStdinArgs', WRITE_STDIN_FIELDS, ['session_id']);
  } catch (error) {
    return parseFailure(error);
  }
  const parsed = v.safeParse(WriteStdinArgsSchema, raw);
  if (!parsed.success) return { ok: false, message: `${PARSE_ERROR_PREFIX}${v.summarize(parsed.issues)}` };
  return { ok: true, args: parsed.output };
}
