import { describe, expect, test } from 'vitest';
import {
  ExecError,
  FrameDecodeError,
  OutputGapError,
  RPC_ERROR_NUMBERS,
  RpcError,
  TransportClosedError,
  toExecError,
  toWireError,
} from './errors.ts';
import { errorMessage } from './messages.ts';

describe('the error-code table', () => {
  test('maps the stable codes to the original JSON-RPC numbers', () => {
    expect(RPC_ERROR_NUMBERS).toEqual({
      invalidRequest: -32600,
      methodNotFound: -32601,
      invalidParams: -32602,
      internal: -32603,
      notFound: -32004,
      sessionAlreadyAttached: -32010,
      transportClosed: -32000,
    });
  });

  test('every number maps back to its code', () => {
    for (const [code, number] of Object.entries(RPC_ERROR_NUMBERS)) {
      expect(RpcError.fromWire({ code: number, message: 'm' }).code).toBe(code);
    }
  });
});

describe('ExecError and subclasses', () => {
  test('keep code, message and cause', () => {
    const cause = new Error('root');
    const error = new ExecError('spawnFailed', 'could not spawn', { cause });
    expect(error).toMatchObject({
      name: 'ExecError',
      code: 'spawnFailed',
      message: 'could not spawn',
      cause,
    });
    expect(error).toBeInstanceOf(Error);
  });

  test('is() recognises errors from another copy of the package by the Symbol.for brand', () => {
    const foreign = Object.create(null) as Record<symbol, unknown>;
    foreign[Symbol.for('@execd/protocol/ExecError')] = true;
    expect(ExecError.is(foreign)).toBe(true);
    expect(ExecError.is(new Error('x'))).toBe(false);
    expect(ExecError.is(null)).toBe(false);
    expect(ExecError.is('x')).toBe(false);
  });

  test('RpcError.is is true only for RPC errors', () => {
    expect(RpcError.is(new RpcError('internal', 'x'))).toBe(true);
    expect(RpcError.is(new FrameDecodeError('invalidRequest', 'x'))).toBe(true);
    expect(RpcError.is(new OutputGapError(5))).toBe(false);
    expect(ExecError.is(new RpcError('internal', 'x'))).toBe(true);
  });

  test('RpcError round-trips through the wire object, keeping unknown numbers verbatim', () => {
    const error = new RpcError(
      'sessionAlreadyAttached',
      'session s is already attached to another connection',
    );
    expect(error.toWire()).toEqual({
      code: -32010,
      message: 'session s is already attached to another connection',
    });
    expect(new RpcError('invalidParams', 'bad', { data: { field: 'env' } }).toWire()).toEqual({
      code: -32602,
      message: 'bad',
      data: { field: 'env' },
    });
    const unknown = RpcError.fromWire({ code: -31999, message: 'custom', data: [1] });
    expect(unknown).toMatchObject({ code: 'internal', rpcCode: -31999, data: [1] });
    expect(unknown.toWire()).toEqual({ code: -31999, message: 'custom', data: [1] });
  });

  test('OutputGapError and TransportClosedError carry their facts', () => {
    expect(new OutputGapError(42)).toMatchObject({ code: 'outputGap', firstRetainedSeq: 42 });
    expect(new TransportClosedError(1006)).toMatchObject({ code: 'transportClosed', closeCode: 1006 });
    expect(new TransportClosedError(undefined, 'exec-server transport disconnected').message).toBe(
      'exec-server transport disconnected',
    );
  });
});

describe('toExecError / toWireError / errorMessage', () => {
  test('normalise anything thrown, keeping the original as cause', () => {
    const plain = new TypeError('boom');
    const normalised = toExecError(plain);
    expect(normalised).toMatchObject({ code: 'internal', message: 'boom', cause: plain });
    expect(toExecError('text')).toMatchObject({ code: 'internal', message: 'text' });
    const existing = new ExecError('aborted', 'x');
    expect(toExecError(existing)).toBe(existing);
  });

  test('build the wire error object', () => {
    expect(toWireError(new RpcError('invalidRequest', 'unknown process id p'))).toEqual({
      code: -32600,
      message: 'unknown process id p',
    });
    expect(toWireError(new Error('spawn failed: ENOENT'))).toEqual({
      code: -32603,
      message: 'spawn failed: ENOENT',
    });
    expect(toWireError(new ExecError('spawnFailed', 'x'))).toEqual({ code: -32603, message: 'x' });
    expect(toWireError(new TransportClosedError(undefined, 'JSON-RPC transport closed'))).toEqual({
      code: -32000,
      message: 'JSON-RPC transport closed',
    });
  });

  test('errorMessage answers id -1 when the request could not be read', () => {
    expect(errorMessage(null, new FrameDecodeError('invalidRequest', 'expected value'))).toEqual({
      kind: 'error',
      id: -1,
      error: { code: -32600, message: 'expected value' },
    });
    expect(
      errorMessage(7, new RpcError('methodNotFound', 'exec-server stub does not implement `x` yet')),
    ).toEqual({
      kind: 'error',
      id: 7,
      error: { code: -32601, message: 'exec-server stub does not implement `x` yet' },
    });
  });
});
