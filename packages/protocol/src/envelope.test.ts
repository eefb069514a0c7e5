import { describe, expect, test } from 'vitest';
import { createJsonCodec } from './codec/index.ts';
import { classifyMessage, toWireObject } from './envelope.ts';
import { FrameDecodeError } from './errors.ts';
import { notificationMessage, requestMessage, responseMessage } from './messages.ts';

const json = createJsonCodec();

describe('classifyMessage (as the original: method+id, method, result, else error)', () => {
  test.each([
    [
      'request',
      { id: 1, method: 'm', params: { a: 1 } },
      { kind: 'request', id: 1, method: 'm', params: { a: 1 } },
    ],
    [
      'request with a string id',
      { id: 'r', method: 'm' },
      { kind: 'request', id: 'r', method: 'm', params: null },
    ],
    [
      'request ignoring jsonrpc',
      { jsonrpc: '2.0', id: 2, method: 'm' },
      { kind: 'request', id: 2, method: 'm', params: null },
    ],
    [
      'request with trace',
      { id: 3, method: 'm', trace: { traceparent: 't' } },
      { kind: 'request', id: 3, method: 'm', params: null, trace: { traceparent: 't' } },
    ],
    [
      'notification',
      { method: 'initialized', params: {} },
      { kind: 'notification', method: 'initialized', params: {} },
    ],
    [
      'notification without params',
      { method: 'initialized' },
      { kind: 'notification', method: 'initialized', params: null },
    ],
    ['response', { id: 1, result: { ok: true } }, { kind: 'response', id: 1, result: { ok: true } }],
    ['response with a null result', { id: 1, result: null }, { kind: 'response', id: 1, result: null }],
    [
      'error',
      { id: 1, error: { code: -32600, message: 'x', data: { retryable: false } } },
      { kind: 'error', id: 1, error: { code: -32600, message: 'x', data: { retryable: false } } },
    ],
    [
      'error for an unreadable request',
      { id: -1, error: { code: -32600, message: 'x' } },
      { kind: 'error', id: -1, error: { code: -32600, message: 'x' } },
    ],
  ])('%s', (_name, raw, expected) => {
    expect(classifyMessage(raw)).toEqual(expected);
  });

  test.each([
    ['an array', [1]],
    ['a string', 'x'],
    ['null', null],
    ['bytes', new Uint8Array(1)],
    ['a null id with a method (the original refuses it too)', { id: null, method: 'm' }],
    ['a fractional id', { id: 1.5, method: 'm' }],
    ['a boolean id', { id: true, method: 'm' }],
    ['a method that is not a string', { id: 1, method: 5 }],
    ['a response without id', { result: 1 }],
    ['an error without a code', { id: 1, error: { message: 'x' } }],
    ['an empty object', {}],
  ])('refuses %s with FrameDecodeError -32600', (_name, raw) => {
    expect(() => classifyMessage(raw)).toThrow(FrameDecodeError);
    try {
      classifyMessage(raw);
    } catch (error) {
      expect((error as FrameDecodeError).code).toBe('invalidRequest');
    }
  });

  test('inherited members do not count as present', () => {
    const raw = Object.create({ method: 'm', id: 1 }) as object;
    expect(() => classifyMessage(raw)).toThrow(FrameDecodeError);
  });
});

describe('message builders and the wire form', () => {
  test('toWireObject has no kind and no jsonrpc member', () => {
    expect(toWireObject(requestMessage(1, 'm', { a: 1 }))).toEqual({ id: 1, method: 'm', params: { a: 1 } });
    expect(toWireObject(notificationMessage('n', {}))).toEqual({ method: 'n', params: {} });
    expect(toWireObject({ kind: 'notification', method: 'n', params: {}, trace: { t: 1 } })).toEqual({
      method: 'n',
      params: {},
      trace: { t: 1 },
    });
    expect(toWireObject(responseMessage('x', { ok: 1 }))).toEqual({ id: 'x', result: { ok: 1 } });
  });

  test('every kind round-trips through the JSON codec', () => {
    for (const message of [
      requestMessage(1, 'request', { items: [1, 2, 3] }),
      notificationMessage('notification', { enabled: true }),
      responseMessage('response', { value: 'ok' }),
      {
        kind: 'error',
        id: 2,
        error: { code: -32603, message: 'failed', data: { retryable: false } },
      } as const,
    ]) {
      expect(json.decode(json.encode(message))).toEqual(message);
    }
  });
});
