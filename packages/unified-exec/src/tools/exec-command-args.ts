import * as v from 'valibot';
import { DEFAULT_EXEC_YIELD_TIME_MS } from '../constants.ts';
import { type ExecCommandPolicyOptions, validateExecCommandPolicy } from './exec-command-policy.ts';
import { JsonArgsError } from './json-reader.ts';
import {
  boolField,
  enumField,
  type FieldReader,
  integerField,
  readDocument,
  stringField,
  stringListField,
  structField,
} from './serde-fields.ts';

/** Per-command sandbox override the model may ask for. */
export type SandboxPermissions = 'use_default' | 'with_additional_permissions' | 'require_escalated';

/** Extra sandbox access asked for with `with_additional_permissions`. */
export interface AdditionalPermissions {
  network?: { enabled?: boolean };
  file_system?: { read?: string[]; write?: string[] };
}

/** Parsed `exec_command` arguments, defaults applied (`tty` false, `yield_time_ms` 10000). */
export interface ExecCommandArgs {
  cmd: string;
  workdir?: string;
  shell?: string;
  login?: boolean;
  tty: boolean;
  yield_time_ms: number;
  /** Absent means 10,000 at formatting time. */
  max_output_tokens?: number;
  sandbox_permissions: SandboxPermissions;
  justification?: string;
  prefix_rule?: string[];
  additional_permissions?: AdditionalPermissions;
  environment_id?: string;
}

/** Either parsed arguments or the exact text the original would answer the model with. */
export type ArgsParseResult<T> = { ok: true; args: T } | { ok: false; message: string };

/** What the handler knows when it validates `exec_command` arguments. */
export interface ParseExecCommandArgsOptions extends ExecCommandPolicyOptions {
  /** Ids of the environments the call may target; when given, others are rejected. */
  readonly environmentIds?: readonly string[];
}

// Rust declaration order of SandboxPermissions, as serde lists it in "unknown variant" errors.
const SANDBOX_PERMISSION_VARIANTS = [
  'use_default',
  'require_escalated',
  'with_additional_permissions',
] as const;

const ENVIRONMENT_FIELDS: Record<string, FieldReader> = {
  workdir: stringField(true),
  environment_id: stringField(true),
};

const EXEC_FIELDS: Record<string, FieldReader> = {
  cmd: stringField(false),
  workdir: stringField(true),
  shell: stringField(true),
  login: boolField(true),
  tty: boolField(false),
  yield_time_ms: integerField('u64', false),
  max_output_tokens: integerField('usize', true),
  sandbox_permissions: enumField(SANDBOX_PERMISSION_VARIANTS),
  justification: stringField(true),
  prefix_rule: stringListField(),
  additional_permissions: structField('AdditionalPermissionProfile', {
    network: structField('NetworkPermissions', { enabled: boolField(true) }),
    file_system: structField('FileSystemPermissions', {
      read: stringListField(),
      write: stringListField(),
    }),
  }),
  environment_id: stringField(true),
};

const ExecCommandArgsSchema = v.object({
  cmd: v.string(),
  workdir: v.exactOptional(v.string()),
  shell: v.exactOptional(v.string()),
  login: v.exactOptional(v.boolean()),
  tty: v.optional(v.boolean(), false),
  yield_time_ms: v.optional(v.number(), DEFAULT_EXEC_YIELD_TIME_MS),
  max_output_tokens: v.exactOptional(v.number()),
  sandbox_permissions: v.optional(v.picklist(SANDBOX_PERMISSION_VARIANTS), 'use_default'),
  justification: v.exactOptional(v.string()),
  prefix_rule: v.exactOptional(v.array(v.string())),
  additional_permissions: v.exactOptional(
    v.object({
      network: v.exactOptional(v.object({ enabled: v.exactOptional(v.boolean()) })),
      file_system: v.exactOptional(
        v.object({ read: v.exactOptional(v.array(v.string())), write: v.exactOptional(v.array(v.string())) }),
      ),
    }),
  ),
  environment_id: v.exactOptional(v.string()),
});

// Compile-time proof that the hand-written interface and the schema agree.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const schemaMatchesInterface: Same<v.InferOutput<typeof ExecCommandArgsSchema>, ExecCommandArgs> = true;
void schemaMatchesInterface;

/** Prefix of every argument-decoding error the original sends back. */
export const PARSE_ERROR_PREFIX = 'failed to parse function arguments: ';

/**
 * Parses `exec_command` arguments as the original does and never throws: the model's JSON text
 * (or an already-decoded object, re-serialised) is read field by field with serde's error texts
 * and positions, then checked against the environment list and the policy (§4.1).
 */
export function parseExecCommandArgs(
  input: unknown,
  options: ParseExecCommandArgsOptions = {},
): ArgsParseResult<ExecCommandArgs> {
  const text = typeof input === 'string' ? input : (JSON.stringify(input) ?? '');
  let raw: Record<string, unknown>;
  try {
    const environment = readDocument(text, 'ToolEnvironmentArgs', ENVIRONMENT_FIELDS);
    const environmentId = environment.environment_id;
    if (
      typeof environmentId === 'string' &&
      options.environmentIds !== undefined &&
      !options.environmentIds.includes(environmentId)
    ) {
      return { ok: false, message: `unknown turn environment id \`${environmentId}\`` };
    }
    raw = readDocument(text, 'ExecCommandArgs', EXEC_FIELDS, ['cmd']);
  } catch (error) {
    return parseFailure(error);
  }
  const parsed = v.safeParse(ExecCommandArgsSchema, raw);
  if (!parsed.success) return { ok: false, message: `${PARSE_ERROR_PREFIX}${v.summarize(parsed.issues)}` };
  const policyError = validateExecCommandPolicy(
    parsed.output,
    options,
    raw.sandbox_permissions !== undefined,
  );
  return policyError === undefined ? { ok: true, args: parsed.output } : { ok: false, message: policyError };
}

/** Turns a reader error into the model-facing text; anything else is a bug and is rethrown. */
export function parseFailure(error: unknown): { ok: false; message: string } {
  if (error instanceof JsonArgsError) return { ok: false, message: `${PARSE_ERROR_PREFIX}${error.message}` };
  throw error;
}
