import { startExecServer } from '@execd/exec-server/server';
import { describe, expect, test } from 'vitest';
import { Environment } from '../src/index.ts';
import {
  createHarness,
  type Harness,
  type HarnessOptions,
  setRemoteEnvironmentFactory,
} from './helpers/harness.ts';

/**
 * The yield of every call below: far longer than any answer takes, so a call that returns before
 * it returned because the terminal waited for input (the only thing that ends it early).
 */
const LONG_YIELD_MS = 30_000;

type Mode = 'local' | 'local snapshot' | 'remote msgpack' | 'remote json';

let codec: 'msgpack' | 'json' = 'msgpack';
setRemoteEnvironmentFactory(async (options) => {
  const server = await startExecServer({ listen: 'ws://127.0.0.1:0' });
  try {
    const environment = await Environment.connect({ ...options, url: server.url, client: { codec } });
    const closeEnvironment = environment.close.bind(environment);
    let closing: Promise<void> | undefined;
    Object.defineProperty(environment, 'close', {
      value: () => {
        closing ??= closeEnvironment().finally(() => server.close());
        return closing;
      },
    });
    return environment;
  } catch (error) {
    await server.close();
    throw error;
  }
});

function harness(mode: Mode, options: HarnessOptions = {}): Promise<Harness> {
  if (mode === 'local') return createHarness('local', options);
  // Login commands of a snapshotting environment run through the in-process exec-server.
  if (mode === 'local snapshot') {
    return createHarness('local', {
      ...options,
      environment: { shellSnapshot: true, allowLoginShell: true },
    });
  }
  codec = mode === 'remote json' ? 'json' : 'msgpack';
  return createHarness('remote', options);
}

// The JSON wire of the notification is covered by exec-server's waiting-for-input suite.
const MODES: Mode[] = ['local', 'local snapshot', 'remote msgpack'];

describe.skipIf(process.platform !== 'linux').each(MODES)(
  '%s: a terminal waiting for input ends the wait',
  (mode) => {
    test('a python REPL returns at its prompt, and each round trip with the answer and the next prompt', async () => {
      await using h = await harness(mode);
      const start = await h.execParsed({ cmd: 'python3 -q', tty: true, yield_time_ms: LONG_YIELD_MS });
      expect(start.sessionId).toBe(1000);
      expect(start.output).toContain('>>> ');
      expect(start.wallTimeSeconds).toBeLessThan(LONG_YIELD_MS / 1000);
      for (const [input, answer] of [
        ['x = 6\n', undefined],
        ['print(x * 7)\n', '42'],
        ['print("a" * 3)\n', 'aaa'],
      ] as const) {
        const round = await h.writeParsed({ session_id: 1000, chars: input, yield_time_ms: LONG_YIELD_MS });
        expect(round.sessionId).toBe(1000);
        expect(round.wallTimeSeconds).toBeLessThan(LONG_YIELD_MS / 1000);
        if (answer !== undefined) expect(round.output).toContain(`${answer}\r\n`);
        expect(round.output.endsWith('>>> ')).toBe(true);
      }
      const exited = await h.writeParsed({
        session_id: 1000,
        chars: 'exit()\n',
        yield_time_ms: LONG_YIELD_MS,
      });
      expect(exited).toMatchObject({ sessionId: undefined, exitCode: 0 });
    });

    test('bash `read` without a prompt returns at once; the answer follows the write', async () => {
      await using h = await harness(mode);
      const cmd = 'read -r name; echo "hello $name"; read -r again; echo "bye $again"';
      const start = await h.execParsed({ cmd, tty: true, yield_time_ms: LONG_YIELD_MS });
      expect(start).toMatchObject({ sessionId: 1000, exitCode: undefined, output: '' });
      const first = await h.writeParsed({ session_id: 1000, chars: 'ann\n', yield_time_ms: LONG_YIELD_MS });
      expect(first).toMatchObject({ sessionId: 1000, output: 'ann\r\nhello ann\r\n' });
      const last = await h.writeParsed({ session_id: 1000, chars: 'bob\n', yield_time_ms: LONG_YIELD_MS });
      expect(last).toMatchObject({ sessionId: undefined, exitCode: 0, output: 'bob\r\nbye bob\r\n' });
    });

    test('sleeping, bursts of output and a pipe reader are never cut short', async () => {
      await using h = await harness(mode);
      const burst = [
        'import sys, time',
        'for burst in range(10):',
        '    print("burst", burst); sys.stdout.flush(); time.sleep(0.1)',
      ].join('\n');
      for (const [cmd, output] of [
        ['sleep 1; echo slept', 'slept\r\n'],
        [`python3 -c '${burst}'`, 'burst 9\r\n'],
        ['sleep 1 | cat; echo piped', 'piped\r\n'],
        ['python3 -c "sum(range(30_000_000))"; echo computed', 'computed\r\n'],
      ] as const) {
        const result = await h.execParsed({ cmd, tty: true, yield_time_ms: LONG_YIELD_MS });
        expect(result, cmd).toMatchObject({ sessionId: undefined, exitCode: 0 });
        expect(result.output.endsWith(output), cmd).toBe(true);
      }
    }, 120_000);

    test('a program that starts reading after a silent computation still ends the wait', async () => {
      await using h = await harness(mode);
      const cmd = 'python3 -c "sum(range(10_000_000)); print(input(\'name? \'))"';
      const start = await h.execParsed({ cmd, tty: true, yield_time_ms: LONG_YIELD_MS });
      expect(start).toMatchObject({ sessionId: 1000, output: 'name? ' });
      const done = await h.writeParsed({ session_id: 1000, chars: 'zed\n', yield_time_ms: LONG_YIELD_MS });
      expect(done).toMatchObject({ exitCode: 0, output: 'zed\r\nzed\r\n' });
    });

    test('returnOnInputWait: false keeps the original wait (to the yield deadline)', async () => {
      await using h = await harness(mode, { manager: { returnOnInputWait: false } });
      const start = await h.execParsed({ cmd: 'read -r x; echo "got $x"', tty: true, yield_time_ms: 1000 });
      expect(start).toMatchObject({ sessionId: 1000, output: '' });
      expect(start.wallTimeSeconds).toBeGreaterThanOrEqual(1);
      const done = await h.writeParsed({ session_id: 1000, chars: 'y\n', yield_time_ms: 5000 });
      expect(done).toMatchObject({ exitCode: 0, output: 'y\r\ngot y\r\n' });
    });
  },
);
