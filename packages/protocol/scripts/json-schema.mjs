// Builds the JSON Schema of every wire message from the valibot schemas (the single source), with
// `@valibot/to-json-schema`. Pure: the schemas are passed in, so the generator feeds it the built
// package and the drift test feeds it the sources. Describes the JSON codec (`--codec json`, the
// original's wire): bytes are base64 strings there.
import { toJsonSchemaDefs } from '@valibot/to-json-schema';

/** Where the generated file lives, relative to the package root. */
export const SCHEMA_FILE = 'schema/protocol.schema.json';

/** `process/start` -> `ProcessStart`; `http/request/bodyDelta` -> `HttpRequestBodyDelta`. */
export function definitionBase(method) {
  return method
    .split('/')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}

/**
 * The protocol's JSON Schema document (draft-07, plain JSON).
 * @param {object} protocol the exports of `@execd/protocol` (its `dist`, or its `src` in tests):
 *   METHODS, Bytes, Empty, SandboxParam, SandboxContext, FileSystemSandboxContext, W3cTraceContext.
 * @returns {object}
 */
export function buildProtocolJsonSchema(protocol) {
  const { METHODS, Bytes, Empty, SandboxParam, SandboxContext, FileSystemSandboxContext, W3cTraceContext } =
    protocol;
  const definitions = { SandboxContext, FileSystemSandboxContext, W3cTraceContext };
  const methods = {};
  for (const [method, entry] of Object.entries(METHODS)) {
    const base = definitionBase(method);
    const row = { type: entry.type, from: entry.from, params: `#/definitions/${base}Params` };
    definitions[`${base}Params`] = entry.params;
    if (entry.result !== undefined) {
      definitions[`${base}Result`] = entry.result;
      row.result = `#/definitions/${base}Result`;
    }
    if (entry.extension === true) row.extension = true;
    methods[method] = row;
  }

  const converted = toJsonSchemaDefs(definitions, {
    target: 'draft-07',
    // The wire form: a pipe stops before its first transform (`opt`'s null -> undefined, legacy
    // spellings mapped to current ones); what is accepted there is what a peer may send.
    typeMode: 'input',
    // Anything else the converter cannot express is handled below; an unhandled one throws, so
    // a new construct in the schemas fails generation instead of silently widening the schema.
    errorMode: 'throw',
    // A schema used twice (`Empty`, the two sandbox forms) becomes a reference: the converter
    // writes `$defs` references, this document keeps draft-07's `definitions`.
    overrideRef: ({ referenceId }) => `#/definitions/${referenceId}`,
    overrideSchema: ({ valibotSchema }) => {
      // Empty (`{}`, `null` or absent; arrays refused) is a custom check, then a transform: in
      // input mode the pipe converts to its first schema, this check.
      if (valibotSchema === Empty.pipe[0]) return { type: ['object', 'null'] };
      // The Uint8Array check inside Bytes: the union is overridden whole below (the converter
      // visits a union's options before the union).
      if (valibotSchema === Bytes.options[0]) return {};
      // Uint8Array in memory; on the JSON wire standard padded base64.
      if (valibotSchema === Bytes) return { type: 'string', contentEncoding: 'base64' };
      // Chosen by which key is present: execd's form (`profile`) or the original's (`permissions`).
      if (valibotSchema === SandboxParam) {
        return {
          anyOf: [
            { $ref: '#/definitions/SandboxContext' },
            { $ref: '#/definitions/FileSystemSandboxContext' },
          ],
        };
      }
      return undefined;
    },
  });
  // One `$schema` at the root, not one per definition.
  for (const value of Object.values(converted)) delete value.$schema;

  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'execd exec-server protocol (JSON codec)',
    description:
      'Every wire message of the execd / Codex exec-server protocol as sent on the JSON codec ' +
      '(WebSocket text frames or newline-delimited JSON over stdio). Generated from the valibot ' +
      'schemas of @execd/protocol by scripts/gen-schema.mjs; do not edit. A frame is one of ' +
      '`Request`, `Notification`, `Response` or `ErrorResponse`; `x-execd-methods` maps each ' +
      "method to its params and result definitions ('from' says which side sends it). Objects " +
      'accept unknown members (newer peers may add fields).',
    'x-execd-methods': methods,
    definitions: { ...envelopeDefinitions(), ...sortKeys(converted) },
  };
}

function sortKeys(record) {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));
}

/** The envelope (`rpc.rs`), written by hand: its `params`/`result` depend on the method. */
function envelopeDefinitions() {
  return {
    RequestId: {
      description: 'A string or an integer; an execd client uses integers from 1.',
      anyOf: [{ type: 'string' }, { type: 'integer' }],
    },
    Request: {
      description: 'A call; there is no `jsonrpc` member. `params` per `x-execd-methods`.',
      type: 'object',
      required: ['id', 'method'],
      properties: {
        id: { $ref: '#/definitions/RequestId' },
        method: { type: 'string' },
        params: {},
        trace: { $ref: '#/definitions/W3cTraceContext' },
      },
    },
    Notification: {
      description: 'A one-way message (no `id`). `params` per `x-execd-methods`.',
      type: 'object',
      required: ['method'],
      properties: {
        method: { type: 'string' },
        params: {},
        trace: { $ref: '#/definitions/W3cTraceContext' },
      },
    },
    Response: {
      description: 'The answer to the request with the same `id`; `result` per its method.',
      type: 'object',
      required: ['id', 'result'],
      properties: { id: { $ref: '#/definitions/RequestId' }, result: {} },
    },
    ErrorResponse: {
      description: 'A failed call. `id` is -1 (or null) when the request could not be read.',
      type: 'object',
      required: ['id', 'error'],
      properties: {
        id: { anyOf: [{ $ref: '#/definitions/RequestId' }, { type: 'null' }] },
        error: {
          type: 'object',
          required: ['code', 'message'],
          properties: { code: { type: 'integer' }, message: { type: 'string' }, data: {} },
        },
      },
    },
  };
}
