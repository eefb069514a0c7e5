// Validates recorded wire frames against the protocol's JSON Schema (`@execd/protocol/schema.json`).
import { createRequire } from 'node:module';
import { Ajv, type ValidateFunction } from 'ajv';

const require = createRequire(import.meta.url);

type MethodRow = { readonly type: string; readonly params: string; readonly result?: string };
type SchemaDocument = { readonly 'x-execd-methods': Readonly<Record<string, MethodRow>> };

/** A recorded frame: who sent it and the decoded JSON message. */
export interface RecordedFrame {
  readonly dir: 'c>s' | 's>c';
  readonly frame: Record<string, unknown>;
}

/** Checks frames against the schema; requests are remembered so their answers can be checked. */
export class FrameValidator {
  readonly #ajv = new Ajv({ strict: true, allErrors: true });
  readonly #methods: SchemaDocument['x-execd-methods'];
  readonly #pending = new Map<string, string>();

  constructor() {
    const document = require('@execd/protocol/schema.json') as SchemaDocument;
    this.#ajv.addVocabulary(['x-execd-methods']);
    this.#ajv.addSchema(document, 'protocol');
    this.#methods = document['x-execd-methods'];
  }

  #schema(ref: string): ValidateFunction {
    const validate = this.#ajv.getSchema(`protocol${ref}`);
    if (!validate) throw new Error(`no schema ${ref}`);
    return validate;
  }

  #check(ref: string, value: unknown): string[] {
    const validate = this.#schema(ref);
    return validate(value) ? [] : (validate.errors ?? []).map((e) => `${ref}${e.instancePath} ${e.message}`);
  }

  /** The schema violations of one frame (empty when it conforms). */
  check({ dir, frame }: RecordedFrame): string[] {
    if (typeof frame.method === 'string') {
      const row = this.#methods[frame.method];
      if (!row) return [`unknown method ${frame.method}`];
      const isRequest = 'id' in frame;
      if (isRequest) this.#pending.set(`${dir}:${String(frame.id)}`, frame.method);
      return [
        ...this.#check(isRequest ? '#/definitions/Request' : '#/definitions/Notification', frame),
        ...this.#check(row.params, frame.params ?? null),
      ];
    }
    const askedBy = dir === 's>c' ? 'c>s' : 's>c';
    const key = `${askedBy}:${String(frame.id)}`;
    const method = this.#pending.get(key);
    this.#pending.delete(key);
    if ('error' in frame) return this.#check('#/definitions/ErrorResponse', frame);
    const result = method === undefined ? undefined : this.#methods[method]?.result;
    if (result === undefined) return [`an answer to no known request: ${JSON.stringify(frame)}`];
    return [...this.#check('#/definitions/Response', frame), ...this.#check(result, frame.result)];
  }
}
