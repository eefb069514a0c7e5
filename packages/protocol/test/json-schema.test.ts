import { readFile } from 'node:fs/promises';
import { Ajv } from 'ajv';
import { describe, expect, test } from 'vitest';
// @ts-expect-error: a plain ESM script without type declarations.
import { buildProtocolJsonSchema, SCHEMA_FILE } from '../scripts/json-schema.mjs';
import * as protocol from '../src/index.ts';
import { CODEX_0_169_FRAMES, SPEC_WIRE_EXAMPLES } from './fixtures/wire-examples.ts';

type JsonSchemaDocument = {
  definitions: Record<string, object>;
  'x-execd-methods': Record<string, { type: string; params: string; result?: string }>;
};

const build = buildProtocolJsonSchema as (p: typeof protocol) => JsonSchemaDocument;
const checkedIn = JSON.parse(
  await readFile(new URL(`../${SCHEMA_FILE}`, import.meta.url), 'utf8'),
) as JsonSchemaDocument;

function validator(): Ajv {
  const ajv = new Ajv({ strict: true, allErrors: true });
  ajv.addVocabulary(['x-execd-methods']);
  ajv.addSchema(checkedIn, 'protocol');
  return ajv;
}

/** Validates `value` against `#/definitions/<name>`; returns ajv's errors (empty when valid). */
function errorsOf(ajv: Ajv, name: string, value: unknown): unknown[] {
  const validate = ajv.getSchema(`protocol#/definitions/${name}`);
  if (!validate) throw new Error(`no definition ${name}`);
  return validate(value) ? [] : (validate.errors ?? []);
}

describe('protocol JSON Schema', () => {
  test('the checked-in schema is what the valibot schemas generate (run `pnpm --filter @execd/protocol gen:schema`)', () => {
    expect(JSON.parse(JSON.stringify(build(protocol)))).toEqual(checkedIn);
  });

  test('every method of the table has its params (and result for requests)', () => {
    const methods = checkedIn['x-execd-methods'];
    expect(Object.keys(methods).sort()).toEqual(Object.keys(protocol.METHODS).sort());
    for (const [method, row] of Object.entries(methods)) {
      expect(checkedIn.definitions[row.params.replace('#/definitions/', '')], method).toBeDefined();
      if (row.type === 'request') {
        expect(row.result && checkedIn.definitions[row.result.replace('#/definitions/', '')]).toBeDefined();
      }
    }
  });

  test('compiles in strict mode', () => {
    const ajv = validator();
    for (const name of Object.keys(checkedIn.definitions))
      expect(errorsOf(ajv, name, {}), name).toBeInstanceOf(Array);
  });

  test('accepts the spec wire examples and frames of Codex 0.169.0', () => {
    const ajv = validator();
    const methods = checkedIn['x-execd-methods'];
    let pending = new Map<unknown, string>();
    const frames = [
      ...SPEC_WIRE_EXAMPLES.map((example) => example.wire),
      CODEX_0_169_FRAMES.initializeResult,
    ];
    for (const frame of frames) {
      const message = JSON.parse(frame) as Record<string, unknown>;
      if ('method' in message) {
        const row = methods[message.method as string]!;
        const kind = 'id' in message ? 'Request' : 'Notification';
        expect(errorsOf(ajv, kind, message)).toEqual([]);
        expect(errorsOf(ajv, row.params.replace('#/definitions/', ''), message.params), frame).toEqual([]);
        if ('id' in message) pending.set(message.id, message.method as string);
      } else {
        const method = pending.get(message.id) ?? 'initialize';
        pending = new Map([...pending].filter(([id]) => id !== message.id));
        const result = methods[method]!.result!.replace('#/definitions/', '');
        expect(errorsOf(ajv, 'Response', message)).toEqual([]);
        expect(errorsOf(ajv, result, message.result), frame).toEqual([]);
      }
    }
    expect(errorsOf(ajv, 'ErrorResponse', JSON.parse(CODEX_0_169_FRAMES.missingEnvError))).toEqual([]);
  });

  test('refuses what the valibot schemas refuse', () => {
    const ajv = validator();
    const start = { processId: 'p', argv: ['true'], cwd: 'file:///tmp', env: {}, tty: false };
    expect(errorsOf(ajv, 'ProcessStartParams', start)).toEqual([]);
    const { env: _env, ...withoutEnv } = start;
    expect(errorsOf(ajv, 'ProcessStartParams', withoutEnv)).not.toEqual([]);
    expect(errorsOf(ajv, 'ProcessStartParams', { ...start, tty: 'yes' })).not.toEqual([]);
    expect(errorsOf(ajv, 'ProcessWriteParams', { processId: 'p', chunk: 1, writeId: 'w' })).not.toEqual([]);
    expect(errorsOf(ajv, 'ProcessSignalParams', { processId: 'p', signal: 'kill' })).not.toEqual([]);
    expect(errorsOf(ajv, 'EnvironmentInfoParams', [])).not.toEqual([]);
    expect(errorsOf(ajv, 'EnvironmentInfoParams', null)).toEqual([]);
    expect(errorsOf(ajv, 'Request', { method: 'x' })).not.toEqual([]);
  });
});
