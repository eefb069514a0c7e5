import type * as v from 'valibot';
import { describe, expect, expectTypeOf, test } from 'vitest';
import { RpcError } from './errors.ts';
import {
  decodeParams,
  decodeResult,
  isMethodName,
  METHODS,
  type ParamsOf,
  type ResultOf,
} from './methods.ts';
import type { ReadResponse } from './schemas/process.ts';

const START = { processId: 'p', argv: ['/bin/sh', '-c', 'echo hi'], cwd: 'file:///tmp', env: {}, tty: false };

/** The RpcError `fn` throws. */
function rpcError(fn: () => unknown): RpcError {
  try {
    fn();
  } catch (error) {
    expect(RpcError.is(error)).toBe(true);
    return error as RpcError;
  }
  throw new Error('expected an RpcError');
}

describe('decodeParams: required and optional fields as the original', () => {
  test.each([
    ['env', 'process/start', { ...START, env: undefined }],
    ['tty', 'process/start', { ...START, tty: undefined }],
    ['argv', 'process/start', { ...START, argv: undefined }],
    ['cwd', 'process/start', { ...START, cwd: undefined }],
    ['processId', 'process/read', {}],
    ['writeId', 'process/write', { processId: 'p', chunk: '' }],
    ['chunk', 'process/write', { processId: 'p', writeId: '1' }],
    ['signal', 'process/signal', { processId: 'p' }],
    ['clientName', 'initialize', {}],
    ['shell', 'process/start', { ...START, shellSnapshot: { scopeId: 's' } }],
  ] as const)('missing %s is -32602 naming the field', (field, method, params) => {
    const error = rpcError(() => decodeParams(method, JSON.parse(JSON.stringify(params))));
    expect(error.code).toBe('invalidParams');
    expect(error.rpcCode).toBe(-32602);
    expect(error.message).toContain(`missing field \`${field}\``);
  });

  test.each([
    ['env', { ...START, env: null }],
    ['tty', { ...START, tty: 'yes' }],
    ['argv.1', { ...START, argv: ['a', 1] }],
    ['env.A', { ...START, env: { A: 1 } }],
    [
      'envPolicy.inherit',
      {
        ...START,
        envPolicy: { inherit: 'some', ignoreDefaultExcludes: false, exclude: [], set: {}, includeOnly: [] },
      },
    ],
  ])('a wrong %s is -32602 naming the field', (field, params) => {
    const error = rpcError(() => decodeParams('process/start', params));
    expect(error.code).toBe('invalidParams');
    expect(error.message).toContain(`\`${field}\``);
  });

  test('absent and null optional fields read as absent; defaults fill in', () => {
    const absent = decodeParams('process/start', START);
    const nulls = decodeParams('process/start', {
      ...START,
      envPolicy: null,
      shellSnapshot: null,
      pipeStdin: null,
      arg0: null,
      sandbox: null,
      enforceManagedNetwork: null,
      managedNetwork: null,
      networkProxy: null,
    });
    for (const decoded of [absent, nulls]) {
      expect(decoded).toEqual({ ...START, pipeStdin: false, enforceManagedNetwork: false });
      expect(decoded.pipeStdin).toBe(false);
      expect(decoded.arg0).toBeUndefined();
    }
    expect(
      decodeParams('process/read', { processId: 'p', afterSeq: null, maxBytes: null, waitMs: null }),
    ).toEqual({
      processId: 'p',
    });
    expect(decodeParams('initialize', { clientName: 'c', resumeSessionId: null })).toEqual({
      clientName: 'c',
    });
  });

  test('unknown fields are ignored (dropped)', () => {
    expect(decodeParams('process/terminate', { processId: 'p', future: 1 })).toEqual({ processId: 'p' });
  });

  test('schema-level checks stay out of what the server must answer with its own texts', () => {
    // Empty argv and empty writeId have dedicated server errors ("argv must not be empty", ...).
    expect(decodeParams('process/start', { ...START, argv: [] }).argv).toEqual([]);
    expect(decodeParams('process/write', { processId: 'p', chunk: '', writeId: '' }).writeId).toBe('');
  });

  test('bytes accept base64 (JSON codec) and Uint8Array (msgpack codec) alike', () => {
    const fromJson = decodeParams('process/write', { processId: 'p', chunk: 'Zmlyc3QK', writeId: 'w' });
    const fromMsgpack = decodeParams('process/write', {
      processId: 'p',
      chunk: new TextEncoder().encode('first\n'),
      writeId: 'w',
    });
    expect(fromJson).toEqual(fromMsgpack);
    expect(fromJson.chunk).toBeInstanceOf(Uint8Array);
    const bad = rpcError(() =>
      decodeParams('process/write', { processId: 'p', chunk: 'QR==', writeId: 'w' }),
    );
    expect(bad.code).toBe('invalidParams');
    expect(bad.message).toContain('`chunk`');
  });

  test('unit params accept absent, null and {} (and ignore extra members)', () => {
    for (const raw of [undefined, null, {}, { extra: 1 }]) {
      expect(decodeParams('environment/info', raw)).toEqual({});
      expect(decodeParams('process/list', raw)).toEqual({});
    }
    expect(rpcError(() => decodeParams('environment/status', [])).code).toBe('invalidParams');
  });

  test('the initialized notification accepts any params', () => {
    expect(() => decodeParams('initialized', [1, 'x'])).not.toThrow();
  });
});

describe('decodeResult', () => {
  test('validates results and fills defaults', () => {
    expect(
      decodeResult('process/read', {
        chunks: [],
        nextSeq: 1,
        exited: false,
        exitCode: null,
        closed: false,
        failure: null,
      }),
    ).toEqual({
      chunks: [],
      nextSeq: 1,
      exited: false,
      exitCode: null,
      closed: false,
      failure: null,
      sandboxDenied: false,
    });
  });

  test('absent exitCode and failure read as null (serde Option)', () => {
    const result = decodeResult('process/read', { chunks: [], nextSeq: 1, exited: false, closed: false });
    expect(result.exitCode).toBeNull();
    expect(result.failure).toBeNull();
  });

  test('an invalid result is an internal error; a notification has no result', () => {
    expect(rpcError(() => decodeResult('process/terminate', {})).code).toBe('internal');
    expect(rpcError(() => decodeResult('process/output' as 'process/read', {})).code).toBe('internal');
  });
});

describe('the method table', () => {
  test('names every method of the exec surface with its kind and sender', () => {
    const summary = Object.fromEntries(
      Object.entries(METHODS).map(([name, entry]) => [name, `${entry.type}/${entry.from}`]),
    );
    expect(summary).toEqual({
      initialize: 'request/client',
      initialized: 'notification/client',
      'process/start': 'request/client',
      'process/read': 'request/client',
      'process/write': 'request/client',
      'process/signal': 'request/client',
      'process/terminate': 'request/client',
      'process/resize': 'request/client',
      'process/list': 'request/client',
      'environment/info': 'request/client',
      'environment/status': 'request/client',
      'environmentConfig/read': 'request/client',
      'fs/readFile': 'request/client',
      'fs/writeFile': 'request/client',
      'fs/createDirectory': 'request/client',
      'fs/getMetadata': 'request/client',
      'fs/canonicalize': 'request/client',
      'fs/readDirectory': 'request/client',
      'fs/walk': 'request/client',
      'fs/remove': 'request/client',
      'fs/copy': 'request/client',
      'fs/open': 'request/client',
      'fs/readBlock': 'request/client',
      'fs/writeBlock': 'request/client',
      'fs/close': 'request/client',
      'fs/watchMissing': 'request/client',
      'fs/missingChanged': 'notification/server',
      'capabilityRoots/discoverV1': 'request/client',
      'http/request': 'request/client',
      'http/request/bodyDelta': 'notification/server',
      'process/output': 'notification/server',
      'process/outputBatch': 'notification/server',
      'process/exited': 'notification/server',
      'process/closed': 'notification/server',
      'process/waitingForInput': 'notification/server',
      'network/policyRequest': 'request/server',
      'network/policyDecision': 'notification/server',
    });
    expect(isMethodName('process/start')).toBe(true);
    expect(isMethodName('fs/readFile')).toBe(true);
    expect(isMethodName('fs/unwatchMissing')).toBe(false);
    expect(isMethodName('toString')).toBe(false);
  });
});

describe('inferred types (checked by tsc)', () => {
  test('are the in-memory shapes', () => {
    expectTypeOf<ParamsOf<'process/start'>['pipeStdin']>().toEqualTypeOf<boolean>();
    expectTypeOf<ParamsOf<'process/start'>['env']>().toEqualTypeOf<{ [key: string]: string }>();
    expectTypeOf<ParamsOf<'process/start'>['arg0']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<ParamsOf<'process/write'>['chunk']>().toEqualTypeOf<Uint8Array>();
    expectTypeOf<ResultOf<'process/read'>['exitCode']>().toEqualTypeOf<number | null>();
    expectTypeOf<ResultOf<'process/read'>['sandboxDenied']>().toEqualTypeOf<boolean>();
    expectTypeOf<ResultOf<'process/read'>>().toEqualTypeOf<v.InferOutput<typeof ReadResponse>>();
    expectTypeOf<ResultOf<'process/signal'>>().toEqualTypeOf<Record<string, never>>();
  });
});
