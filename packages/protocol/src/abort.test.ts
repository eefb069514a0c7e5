import { describe, expect, test } from 'vitest';
import { abortedBy, untilAborted } from './abort.ts';
import { ExecError, TransportClosedError } from './errors.ts';

describe('abortedBy', () => {
  test('an ExecError reason is the error itself', () => {
    const reason = new TransportClosedError(undefined);
    const controller = new AbortController();
    controller.abort(reason);
    expect(abortedBy(controller.signal, 'process/read')).toBe(reason);
  });

  test('any other reason becomes an `aborted` ExecError that keeps it as the cause', () => {
    const controller = new AbortController();
    controller.abort();
    const error = abortedBy(controller.signal, 'event stream');
    expect(ExecError.is(error) && error.code).toBe('aborted');
    expect(error.cause).toBe(controller.signal.reason);
  });
});

describe('untilAborted', () => {
  test('settles as the promise does while the signal stays quiet', async () => {
    const controller = new AbortController();
    await expect(untilAborted(Promise.resolve(7), controller.signal)).resolves.toBe(7);
    await expect(untilAborted(Promise.reject(new Error('boom')), controller.signal)).rejects.toThrow('boom');
  });

  test('rejects with abortedBy once the signal aborts first, or when it already has', async () => {
    const controller = new AbortController();
    const pending = untilAborted(new Promise<never>(() => {}), controller.signal, 'the decision');
    controller.abort();
    await expect(pending).rejects.toSatisfy(
      (error: unknown) => ExecError.is(error) && error.code === 'aborted',
    );
    await expect(untilAborted(Promise.resolve(1), controller.signal)).rejects.toSatisfy(
      (error: unknown) => ExecError.is(error) && error.code === 'aborted',
    );
  });
});
