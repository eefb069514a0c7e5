/** The JSON Schema subset the tool specs use; key order matches the original's serialisation. */
export interface JsonSchema {
  type: 'object' | 'string' | 'number' | 'boolean' | 'array' | 'integer';
  description?: string;
  enum?: string[];
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean;
}

/** A function tool: name, description, input and output schemas (the original's `ResponsesApiTool`). */
export interface FunctionToolSpec {
  name: string;
  description: string;
  /** Always false: optional fields are really optional. */
  strict: false;
  parameters: JsonSchema;
  /** Shape of the structured (code-mode) result. */
  outputSchema: JsonSchema;
}

/** Which optional parameters the `exec_command` schema shows. */
export interface ExecCommandToolOptions {
  /** Show `login` (hide it when login shells are disabled). Default true. */
  readonly allowLoginShell?: boolean;
  /** Show `shell`. Default true. */
  readonly includeShellParameter?: boolean;
  /** Show `environment_id` (several environments). Default false. */
  readonly includeEnvironmentId?: boolean;
  /** Offer `with_additional_permissions` and `additional_permissions`. Default false. */
  readonly execPermissionApprovals?: boolean;
}

const MAX_OUTPUT_TOKENS_DESCRIPTION =
  'Output token budget. Defaults to 10000 tokens; larger requests may be capped by policy.';

const primitive = (type: JsonSchema['type'], description?: string): JsonSchema =>
  description === undefined ? { type } : { type, description };

const array = (items: JsonSchema, description: string): JsonSchema => ({ type: 'array', description, items });

/** An object schema with alphabetically sorted properties, like the original's BTreeMap. */
function object(
  properties: Record<string, JsonSchema>,
  options: { description?: string; required?: string[] } = {},
): JsonSchema {
  const sorted: Record<string, JsonSchema> = {};
  for (const key of Object.keys(properties).sort()) sorted[key] = properties[key] as JsonSchema;
  const schema: JsonSchema = { type: 'object' };
  if (options.description !== undefined) schema.description = options.description;
  schema.properties = sorted;
  if (options.required !== undefined) schema.required = options.required;
  schema.additionalProperties = false;
  return schema;
}

/** The output schema shared by both tools: `{chunk_id?, wall_time_seconds, exit_code?, session_id?, original_token_count?, output}`. */
export function unifiedExecOutputSchema(): JsonSchema {
  const properties: Record<string, JsonSchema> = {
    chunk_id: primitive('string', 'Chunk identifier included when the response reports one.'),
    wall_time_seconds: primitive('number', 'Elapsed wall time spent waiting for output in seconds.'),
    exit_code: primitive('number', 'Process exit code when the command finished during this call.'),
    session_id: primitive(
      'number',
      'Session identifier to pass to write_stdin when the process is still running.',
    ),
    original_token_count: primitive('number', 'Approximate token count before output truncation.'),
    output: primitive('string', 'Command output text, possibly truncated.'),
  };
  // Declared order (not sorted): the original writes this schema as a literal.
  return {
    type: 'object',
    properties,
    required: ['wall_time_seconds', 'output'],
    additionalProperties: false,
  };
}

function approvalParameters(execPermissionApprovals: boolean): Record<string, JsonSchema> {
  const variants = execPermissionApprovals
    ? ['use_default', 'with_additional_permissions', 'require_escalated']
    : ['use_default', 'require_escalated'];
  const properties: Record<string, JsonSchema> = {
    sandbox_permissions: {
      type: 'string',
      description: execPermissionApprovals
        ? 'Per-command sandbox override. Defaults to `use_default`; use `with_additional_permissions` with `additional_permissions`, or `require_escalated` for unsandboxed execution.'
        : 'Per-command sandbox override. Defaults to `use_default`; use `require_escalated` for unsandboxed execution.',
      enum: variants,
    },
    justification: primitive(
      'string',
      'User-facing approval question for `require_escalated`; omit otherwise.',
    ),
    prefix_rule: array(
      primitive('string'),
      'Reusable approval prefix for `cmd`, only with `sandbox_permissions: "require_escalated"`; for example ["git", "pull"].',
    ),
  };
  if (execPermissionApprovals) {
    properties.additional_permissions = object(
      {
        network: object(
          { enabled: primitive('boolean', 'True requests network access; false or omitted requests none.') },
          { description: 'Network access request.' },
        ),
        file_system: object(
          {
            read: array(
              primitive('string'),
              'Absolute paths to grant read access; omit when none are needed.',
            ),
            write: array(
              primitive('string'),
              'Absolute paths to grant write access; omit when none are needed.',
            ),
          },
          { description: 'Filesystem access request.' },
        ),
      },
      {
        description:
          'Sandboxed filesystem or network access for this command; only with `sandbox_permissions: "with_additional_permissions"`.',
      },
    );
  }
  return properties;
}

/** The `exec_command` tool as the original declares it (non-Windows description). */
export function execCommandToolSpec(options: ExecCommandToolOptions = {}): FunctionToolSpec {
  const properties: Record<string, JsonSchema> = {
    cmd: primitive('string', 'Shell command to execute.'),
    workdir: primitive('string', 'Working directory for the command. Defaults to the turn cwd.'),
    tty: primitive('boolean', 'True allocates a PTY for the command; false or omitted uses plain pipes.'),
    yield_time_ms: primitive(
      'number',
      'Wait before yielding output. Defaults to 10000 ms; effective range is 250-30000 ms.',
    ),
    max_output_tokens: primitive('number', MAX_OUTPUT_TOKENS_DESCRIPTION),
  };
  if (options.includeShellParameter ?? true) {
    properties.shell = primitive('string', "Shell binary to launch. Defaults to the user's default shell.");
  }
  if (options.allowLoginShell ?? true) {
    properties.login = primitive(
      'boolean',
      'True runs the shell with -l/-i semantics; false disables them. Defaults to true.',
    );
  }
  if (options.includeEnvironmentId ?? false) {
    properties.environment_id = primitive(
      'string',
      'Environment id from <environment_context>. Omit to use the primary environment.',
    );
  }
  Object.assign(properties, approvalParameters(options.execPermissionApprovals ?? false));
  return {
    name: 'exec_command',
    description: 'Runs a command in a PTY, returning output or a session ID for ongoing interaction.',
    strict: false,
    parameters: object(properties, { required: ['cmd'] }),
    outputSchema: unifiedExecOutputSchema(),
  };
}

/** The `write_stdin` tool as the original declares it. */
export function writeStdinToolSpec(): FunctionToolSpec {
  return {
    name: 'write_stdin',
    description: 'Writes characters to an existing unified exec session and returns recent output.',
    strict: false,
    parameters: object(
      {
        session_id: primitive('number', 'Identifier of the running unified exec session.'),
        chars: primitive(
          'string',
          'Bytes to write to stdin. Defaults to empty, which polls without writing.',
        ),
        yield_time_ms: primitive(
          'number',
          'Wait before yielding output. Non-empty writes default to 250 ms and cap at 30000 ms; empty polls wait 5000-300000 ms by default.',
        ),
        max_output_tokens: primitive('number', MAX_OUTPUT_TOKENS_DESCRIPTION),
      },
      { required: ['session_id'] },
    ),
    outputSchema: unifiedExecOutputSchema(),
  };
}
