import { describe, expect, test } from 'vitest';
import {
  type Codec,
  createJsonCodec,
  createMsgpackCodec,
  decodeParams,
  decodeResult,
  METHODS,
  type MethodName,
  notificationMessage,
  requestMessage,
  responseMessage,
} from '../src/index.ts';
import { SAMPLES } from './fixtures/samples.ts';

const CODECS: Codec[] = [createJsonCodec(), createMsgpackCodec()];
const METHOD_NAMES = Object.keys(METHODS) as MethodName[];
const WITH_RESULT = METHOD_NAMES.filter((method) => 'result' in METHODS[method]);

/** Sends `params` as `method` through `codec` and validates it on the other side. */
function sendParams(codec: Codec, method: MethodName, params: unknown): unknown {
  const isNotification = METHODS[method].type === 'notification';
  const frame = codec.encode(
    isNotification ? notificationMessage(method, params) : requestMessage(41, method, params),
  );
  const message = codec.decode(frame);
  expect(message.kind).toBe(isNotification ? 'notification' : 'request');
  if (message.kind !== 'request' && message.kind !== 'notification') throw new Error('unreachable');
  expect(message.method).toBe(method);
  return decodeParams(method, message.params);
}

/** Sends `result` as the answer to a `method` request through `codec` and validates it. */
function sendResult(codec: Codec, method: MethodName, result: unknown): unknown {
  const message = codec.decode(codec.encode(responseMessage('r-1', result)));
  if (message.kind !== 'response') throw new Error(`expected a response, got ${message.kind}`);
  expect(message.id).toBe('r-1');
  return decodeResult(method, message.result);
}

test('every method of the table has samples', () => {
  for (const method of METHOD_NAMES) {
    expect(SAMPLES[method].params.length, method).toBeGreaterThan(0);
    if ('result' in METHODS[method]) expect(SAMPLES[method].results.length, method).toBeGreaterThan(0);
  }
});

describe.each(CODECS.map((codec) => [codec.name, codec] as const))('%s codec', (_name, codec) => {
  test.each(METHOD_NAMES)('%s params round-trip to the same in-memory value', (method) => {
    for (const sample of SAMPLES[method].params) {
      const expected = decodeParams(method, sample);
      expect(sendParams(codec, method, expected)).toEqual(expected);
    }
  });

  test.each(WITH_RESULT)('%s results round-trip to the same in-memory value', (method) => {
    for (const sample of SAMPLES[method].results) {
      const expected = decodeResult(method, sample);
      expect(sendResult(codec, method, expected)).toEqual(expected);
    }
  });
});

test('both codecs produce the same in-memory values, bytes as Uint8Array', () => {
  const [json, msgpack] = CODECS as [Codec, Codec];
  for (const method of METHOD_NAMES) {
    for (const sample of SAMPLES[method].params) {
      const viaJson = sendParams(json, method, decodeParams(method, sample));
      expect(sendParams(msgpack, method, viaJson)).toEqual(viaJson);
    }
  }
  const output = sendParams(json, 'process/output', SAMPLES['process/output'].params[1]) as {
    chunk: unknown;
  };
  expect(output.chunk).toBeInstanceOf(Uint8Array);
  expect(Array.from(output.chunk as Uint8Array)).toEqual(Array.from({ length: 256 }, (_, i) => i));
});
