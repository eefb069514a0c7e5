// Pure pieces of the server: line framing, notification gate, lanes and dispatch-mode parsing,
// logger, auth token checks, environment info, CLI argument parsing.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  NOOP_LOGGER,
  notificationMessage,
  pathToFileUri,
  type RpcMessage,
  responseMessage,
} from '@execd/protocol';
import { describe, expect, test } from 'vitest';
import { parseCliArgs } from '../../src/cli/args.ts';
import { encodeOutbound } from '../../src/server/encode-outbound.ts';
import {
  BearerTokenVerifier,
  createJsonLineLogger,
  LineSplitter,
  loadAuthToken,
  localEnvironmentInfo,
  MAX_CONCURRENT_REQUESTS,
  NotificationGate,
  parseDispatchMode,
  RequestLane,
} from '../../src/server/index.ts';

const text = (bytes: Uint8Array): string => Buffer.from(bytes).toString();

describe('LineSplitter', () => {
  test('splits LF and CRLF lines across chunks', () => {
    const splitter = new LineSplitter(100);
    expect(splitter.push(Buffer.from('ab')).lines).toEqual([]);
    const result = splitter.push(Buffer.from('c\r\nde\n\nf'));
    expect(result.lines.map(text)).toEqual(['abc', 'de', '']);
    expect(splitter.push(Buffer.from('\r')).overlong).toBe(false);
    expect(splitter.push(Buffer.from('\n')).lines.map(text)).toEqual(['f']);
  });

  test('a line of exactly the limit passes with either terminator', () => {
    for (const terminator of ['\n', '\r\n']) {
      const splitter = new LineSplitter(4);
      expect(splitter.push(Buffer.from(`abcd${terminator}`))).toMatchObject({ overlong: false });
    }
    // Split right before the LF of a CRLF: the pending CR must not count.
    const splitter = new LineSplitter(4);
    expect(splitter.push(Buffer.from('abcd\r')).overlong).toBe(false);
    expect(splitter.push(Buffer.from('\n')).lines.map(text)).toEqual(['abcd']);
  });

  test('overlong lines are reported before their end arrives', () => {
    const splitter = new LineSplitter(4);
    expect(splitter.push(Buffer.from('ok\nabcde')).lines.map(text)).toEqual(['ok']);
    const again = new LineSplitter(4);
    expect(again.push(Buffer.from('abcde')).overlong).toBe(true);
    expect(again.push(Buffer.from('\n')).overlong).toBe(true);
    expect(new LineSplitter(4).push(Buffer.from('abcde\n')).overlong).toBe(true);
  });
});

describe('NotificationGate', () => {
  test('congested above the pause mark until flushed down to the resume mark', () => {
    const pressure: boolean[] = [];
    const gate = new NotificationGate({
      maxQueuedBytes: 1_000,
      pauseAboveBytes: 100,
      resumeAtBytes: 40,
      onPressure: (congested) => pressure.push(congested),
    });
    expect(gate.admit(0, 60)).toEqual({ send: true });
    expect(gate.congested).toBe(false);
    expect(gate.admit(60, 60)).toEqual({ send: true });
    expect(gate.congested).toBe(true);
    // A response counts toward the backlog too; it never changes a decision about dropping.
    gate.observe(120, 500);
    gate.flushed(60);
    expect(gate.congested).toBe(true);
    gate.flushed(40);
    expect(gate.congested).toBe(false);
    // A flush reported while not congested changes nothing.
    gate.flushed(0);
    gate.observe(0, 101);
    expect(pressure).toEqual([true, false, true]);
    expect(gate.stats).toEqual({ sent: 2, dropped: 0, pauses: 2 });
  });

  test('drops notifications only past the hard cap, until back under the pause mark', () => {
    const gate = new NotificationGate({ maxQueuedBytes: 100, pauseAboveBytes: 50, resumeAtBytes: 10 });
    expect(gate.admit(60, 60)).toEqual({ send: false, startedDropping: true });
    expect(gate.admit(55, 10)).toEqual({ send: false, startedDropping: false });
    expect(gate.admit(50, 10)).toEqual({ send: true, resumedAfterDropping: 2 });
    expect(gate.stats).toEqual({ sent: 1, dropped: 2, pauses: 1 });
  });

  test('the marks default to a quarter and a sixteenth of the cap', () => {
    const pressure: boolean[] = [];
    const gate = new NotificationGate({ maxQueuedBytes: 1_600, onPressure: (c) => pressure.push(c) });
    gate.observe(0, 400);
    expect(gate.congested).toBe(false);
    gate.observe(400, 1);
    gate.flushed(101);
    gate.flushed(100);
    expect(pressure).toEqual([true, false]);
    expect(() => new NotificationGate({ maxQueuedBytes: 10, pauseAboveBytes: 20 })).toThrow(RangeError);
  });

  test('an empty queue always takes one frame, however large', () => {
    expect(new NotificationGate({ maxQueuedBytes: 10 }).admit(0, 1_000)).toEqual({ send: true });
  });
});

describe('dispatch mode and lanes', () => {
  test('request_dispatch_mode_parses_bounded_concurrency', () => {
    expect(parseDispatchMode('1')).toEqual({ kind: 'inline' });
    expect(parseDispatchMode(2)).toEqual({ kind: 'concurrent', limit: 2 });
    expect(parseDispatchMode('32')).toEqual({ kind: 'concurrent', limit: 32 });
    expect(parseDispatchMode(String(Number.MAX_SAFE_INTEGER))).toEqual({
      kind: 'concurrent',
      limit: MAX_CONCURRENT_REQUESTS,
    });
  });

  test.each(['0', '-1', 'x', '', '1.5', ' '])(
    'concurrent_request_limit_rejects_invalid_values %j',
    (value) => {
      expect(() => parseDispatchMode(value)).toThrow(expect.objectContaining({ code: 'invalidParams' }));
    },
  );

  test('a lane runs at most `limit` tasks and admits waiters in arrival order', async () => {
    const lane = new RequestLane(2);
    const started: number[] = [];
    const releases: (() => void)[] = [];
    const tasks = [0, 1, 2, 3].map((n) =>
      lane.run(
        () =>
          new Promise<void>((resolve) => {
            started.push(n);
            releases[n] = resolve;
          }),
      ),
    );
    await Promise.resolve();
    expect(started).toEqual([0, 1]);
    expect(lane.waiting).toBe(2);
    releases[1]!();
    await tasks[1];
    await Promise.resolve();
    expect(started).toEqual([0, 1, 2]);
    releases[0]!();
    releases[2]!();
    await tasks[2];
    await Promise.resolve();
    expect(started).toEqual([0, 1, 2, 3]);
    releases[3]!();
    await Promise.all(tasks);
    expect(lane.running).toBe(0);
  });

  test('a cancelled waiter is skipped', async () => {
    const lane = new RequestLane(1);
    let release!: () => void;
    const first = lane.run(() => new Promise<void>((resolve) => (release = resolve)));
    const abort = new AbortController();
    let ran = false;
    const second = lane.run(async () => {
      ran = true;
    }, abort.signal);
    abort.abort();
    release();
    await Promise.all([first, second]);
    expect(ran).toBe(false);
    expect(lane.running).toBe(0);
  });
});

describe('createJsonLineLogger', () => {
  test('writes one JSON object per line at or above the level', () => {
    const lines: string[] = [];
    const logger = createJsonLineLogger({
      level: 'info',
      write: (line) => lines.push(line),
      now: () => new Date(0),
    });
    logger.debug('hidden');
    logger.warn('shown', { n: 1, error: new Error('boom'), msg: 'cannot override' });
    expect(lines).toEqual([
      '{"ts":"1970-01-01T00:00:00.000Z","level":"warn","msg":"shown","n":1,"error":{"name":"Error","message":"boom"}}\n',
    ]);
    const silent: string[] = [];
    createJsonLineLogger({ level: 'off', write: (line) => silent.push(line) }).error('x');
    expect(silent).toEqual([]);
  });
});

describe('auth', () => {
  test('bearer tokens are checked exactly', () => {
    const verifier = new BearerTokenVerifier('abc');
    expect(verifier.verify('Bearer abc')).toBe(true);
    expect(verifier.verify('BEARER   abc ')).toBe(true);
    for (const header of [
      undefined,
      '',
      'abc',
      'Bearer',
      'Bearer ab',
      'Bearer abcd',
      'Bearer abc def',
      'Basic abc',
    ]) {
      expect(verifier.verify(header)).toBe(false);
    }
    expect(() => new BearerTokenVerifier('')).toThrow(expect.objectContaining({ code: 'invalidParams' }));
  });

  test('the token comes from the file (trimmed), else EXECD_AUTH_TOKEN', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'execd-auth-'));
    try {
      const file = join(dir, 'token');
      await writeFile(file, 'from-file\n');
      expect(await loadAuthToken({ tokenFile: file, env: { EXECD_AUTH_TOKEN: 'from-env' } })).toBe(
        'from-file',
      );
      expect(await loadAuthToken({ env: { EXECD_AUTH_TOKEN: 'from-env' } })).toBe('from-env');
      expect(await loadAuthToken({ env: {} })).toBeUndefined();
      await writeFile(file, ' \n');
      await expect(loadAuthToken({ tokenFile: file })).rejects.toMatchObject({ code: 'invalidParams' });
      await expect(loadAuthToken({ tokenFile: join(dir, 'missing') })).rejects.toMatchObject({
        code: 'invalidParams',
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('localEnvironmentInfo', () => {
  test('reports $SHELL, cwd and TMPDIR as file URIs', () => {
    const info = localEnvironmentInfo({ env: { SHELL: '/usr/bin/zsh', TMPDIR: '/var/tmp/x' }, cwd: '/work' });
    expect(info).toMatchObject({
      shell: { name: 'zsh', path: '/usr/bin/zsh' },
      cwd: 'file:///work',
      temporaryDirectories: ['file:///var/tmp/x'],
      tempDir: 'file:///var/tmp/x',
    });
  });

  test('local_environment_info_resolves_relative_temporary_directory', () => {
    const info = localEnvironmentInfo({ env: { TMPDIR: 'rel/tmp' }, cwd: '/base' });
    expect(info.temporaryDirectories).toEqual([pathToFileUri('/base/rel/tmp')]);
    expect(info.shell).toEqual({ name: 'sh', path: '/bin/sh' });
  });

  test('without TMPDIR: no temporary directories, tempDir falls back to /tmp', () => {
    const info = localEnvironmentInfo({ env: {}, cwd: '/' });
    expect(info.temporaryDirectories).toEqual([]);
    expect(info.tempDir).toBe('file:///tmp');
  });
});

describe('execd-server arguments', () => {
  test('flags take `--flag value` or `--flag=value`', () => {
    expect(
      parseCliArgs([
        '--listen',
        'stdio',
        '--concurrent-requests=4',
        '--log-level',
        'debug',
        '--auth-token-file=/t',
        '--allowed-host',
        'execd.svc',
        '--allowed-host=.agents.svc,other',
      ]),
    ).toEqual({
      listen: 'stdio',
      concurrentRequests: '4',
      authTokenFile: '/t',
      allowedHosts: ['execd.svc', '.agents.svc', 'other'],
      logLevel: 'debug',
      help: false,
      version: false,
      requireSandbox: false,
      prepareSandboxes: false,
      forkServer: true,
    });
    expect(parseCliArgs(['--prepare-sandboxes'])).toMatchObject({ prepareSandboxes: true });
    expect(parseCliArgs(['--no-fork-server'])).toMatchObject({ forkServer: false });
    expect(parseCliArgs([])).toMatchObject({
      listen: undefined,
      allowedHosts: [],
      logLevel: 'info',
      help: false,
    });
    expect(parseCliArgs(['-h']).help).toBe(true);
  });

  test.each([['--nope'], ['--listen'], ['--log-level', 'loud'], ['positional']])(
    'bad usage %j',
    (...argv) => {
      expect(() => parseCliArgs(argv)).toThrow(expect.objectContaining({ code: 'invalidParams' }));
    },
  );
});

describe('encodeOutbound', () => {
  const context = { logger: NOOP_LOGGER, connection: 'test' };
  const failOnBigInt = (message: RpcMessage): string => JSON.stringify(message);

  test('a response that cannot be encoded becomes a -32603 error for the same id', () => {
    const frame = encodeOutbound(responseMessage(7, { n: 1n }), failOnBigInt, context);
    expect(JSON.parse(frame!)).toMatchObject({ kind: 'error', id: 7, error: { code: -32603 } });
  });

  test('a notification that cannot be encoded is dropped', () => {
    expect(
      encodeOutbound(notificationMessage('process/output', { n: 1n }), failOnBigInt, context),
    ).toBeUndefined();
  });
});
