import { describe, expect, test } from 'vitest';
import {
  exitCodeFromStatus,
  ptyExitCodeFromStatus,
  signalName,
  signalNumber,
  toExitStatus,
  toPtyExitStatus,
} from './exit-status.ts';

describe('exitCodeFromStatus', () => {
  test.each([
    [0, null, 0],
    [7, null, 7],
    [255, null, 255],
    [null, 'SIGINT', 130],
    [null, 'SIGKILL', 137],
    [null, 'SIGTERM', 143],
    [0, 9, 137],
    [0, 0, 0],
    [null, null, -1],
    [undefined, undefined, -1],
  ] as const)('code %s signal %s -> %s', (code, signal, expected) => {
    expect(exitCodeFromStatus(code, signal)).toBe(expected);
  });

  test('an unknown signal name is -1', () => {
    expect(exitCodeFromStatus(null, 'SIGNOPE' as NodeJS.Signals)).toBe(-1);
  });
});

describe('toExitStatus', () => {
  test('names numeric signals and treats 0 as none', () => {
    expect(toExitStatus(0, 15)).toEqual({ exitCode: 143, signal: 'SIGTERM' });
    expect(toExitStatus(3, 0)).toEqual({ exitCode: 3, signal: null });
    expect(toExitStatus(null, 'SIGHUP')).toEqual({ exitCode: 129, signal: 'SIGHUP' });
  });

  test('signal names and numbers round-trip', () => {
    expect(signalNumber('SIGKILL')).toBe(9);
    expect(signalName(2)).toBe('SIGINT');
    expect(signalName(999)).toBeUndefined();
  });
});

describe('PTY exit codes (the original reports a PTY child killed by any signal as 1)', () => {
  test.each([
    [0, null, 0],
    [7, null, 7],
    [null, 'SIGINT', 1],
    [null, 'SIGKILL', 1],
    [null, 'SIGTERM', 1],
    [0, 9, 1],
    [0, 0, 0],
    [null, null, -1],
  ] as const)('code %s signal %s -> %s', (code, signal, expected) => {
    expect(ptyExitCodeFromStatus(code, signal)).toBe(expected);
  });

  test('the signal stays in the status', () => {
    expect(toPtyExitStatus(0, 2)).toEqual({ exitCode: 1, signal: 'SIGINT' });
    expect(toPtyExitStatus(5, null)).toEqual({ exitCode: 5, signal: null });
  });
});
