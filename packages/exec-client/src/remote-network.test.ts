import { ExecError } from '@execd/protocol';
import { expect, test } from 'vitest';
import { RemoteProcessNetwork } from './remote-network.ts';

function reasonOf(signal: AbortSignal): unknown {
  expect(signal.aborted).toBe(true);
  return signal.reason;
}

test('a signal taken before the end is aborted by it with the reason as an ExecError', () => {
  const network = new RemoteProcessNetwork();
  const signal = network.endedSignal;
  expect(signal.aborted).toBe(false);
  expect(network.endedSignal).toBe(signal);
  network.end('process p closed');
  const reason = reasonOf(signal);
  expect(ExecError.is(reason)).toBe(true);
  expect(reason).toMatchObject({ code: 'aborted', message: 'process p closed' });
});

test('a signal first asked for after the end is already aborted, with the first reason', () => {
  const network = new RemoteProcessNetwork();
  network.end('process p closed');
  network.end('process p is no longer followed');
  const signal = network.endedSignal;
  expect(reasonOf(signal)).toMatchObject({ code: 'aborted', message: 'process p closed' });
  expect(network.endedSignal).toBe(signal);
});

test('ending twice keeps the first reason for a signal taken before', () => {
  const network = new RemoteProcessNetwork();
  const signal = network.endedSignal;
  network.end('first');
  network.end('second');
  expect(reasonOf(signal)).toMatchObject({ message: 'first' });
});
