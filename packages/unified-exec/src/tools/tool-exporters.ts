import type { FunctionToolSpec, JsonSchema } from './tool-specs.ts';

/** An OpenAI function-calling tool (Responses API shape), as the original sends it. */
export interface OpenAiFunctionTool {
  type: 'function';
  name: string;
  description: string;
  strict: false;
  parameters: JsonSchema;
}

/** An Anthropic Messages API tool. */
export interface AnthropicTool {
  name: string;
  description: string;
  input_schema: JsonSchema;
}

/** A Model Context Protocol tool listing entry. */
export interface McpTool {
  name: string;
  description: string;
  inputSchema: JsonSchema;
}

/** Deep copy, so callers can mutate an exported tool without touching the spec. */
function copy(schema: JsonSchema): JsonSchema {
  return structuredClone(schema);
}

/** `{type: 'function', name, description, strict: false, parameters}`. */
export function toOpenAiFunctionTool(spec: FunctionToolSpec): OpenAiFunctionTool {
  return {
    type: 'function',
    name: spec.name,
    description: spec.description,
    strict: false,
    parameters: copy(spec.parameters),
  };
}

/** `{name, description, input_schema}`. */
export function toAnthropicTool(spec: FunctionToolSpec): AnthropicTool {
  return { name: spec.name, description: spec.description, input_schema: copy(spec.parameters) };
}

/** `{name, description, inputSchema}`. */
export function toMcpTool(spec: FunctionToolSpec): McpTool {
  return { name: spec.name, description: spec.description, inputSchema: copy(spec.parameters) };
}
