// `ExecServerClient.run()`: a real exec-server on 127.0.0.1:0, real shells.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CodecName, ExecError } from '@execd/protocol';
import { waitFor } from '@execd/test-kit';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ExecServerClient } from '../src/exec-server-client.ts';
import { startTrackedServer, tracker } from './helpers/harness.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'execd-run-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function connected(codec: CodecName = 'msgpack') {
  const server = await startTrackedServer();
  const client = await ExecServerClient.connect({ url: server.url, codec });
  return {
    client,
    async [Symbol.asyncDispose]() {
      await client.close();
      await server.close();
    },
  };
}

describe('run()', () => {
  test.each(['msgpack', 'json'] as CodecName[])('argv: stdout, stderr and exit code (%s)', async (codec) => {
    await using env = await connected(codec);
    const result = await env.client.run(['sh', '-c', 'printf out; printf err >&2; exit 3'], { cwd: dir });
    expect(result).toMatchObject({
      stdout: 'out',
      stderr: 'err',
      exitCode: 3,
      timedOut: false,
      truncated: false,
    });
    expect(result.argv).toEqual(['sh', '-c', 'printf out; printf err >&2; exit 3']);
    expect(Buffer.from(result.stdoutBytes).toString()).toBe('out');
  });

  test('a command string runs in the login shell, in cwd, with env over the inherited environment', async () => {
    await using env = await connected();
    const result = await env.client.run('echo "$PWD:$GREETING:$(test -n "$PATH" && echo path)"', {
      cwd: dir,
      env: { GREETING: 'héllo' },
    });
    expect(result.argv.slice(1)).toEqual(['-lc', 'echo "$PWD:$GREETING:$(test -n "$PATH" && echo path)"']);
    expect(result.stdout).toBe(`${dir}:héllo:path\n`);
    expect(result.exitCode).toBe(0);
  });

  test('without cwd it runs in the server cwd', async () => {
    await using env = await connected();
    const result = await env.client.run(['pwd']);
    expect(`file://${result.stdout.trim()}`).toBe(env.client.initializeEnvironmentInfo?.cwd);
  });

  test('a tty command prints on stdout', async () => {
    await using env = await connected();
    const result = await env.client.run(['sh', '-c', 'test -t 1 && echo tty; echo e >&2'], {
      cwd: dir,
      tty: true,
    });
    expect(result.stdout.replaceAll('\r', '')).toBe('tty\ne\n');
    expect(result.stderr).toBe('');
  });

  test('timeoutMs kills the process group and reports timedOut', async () => {
    await using env = await connected();
    const result = await env.client.run(['sh', '-c', 'echo started; sleep 600'], {
      cwd: dir,
      timeoutMs: 300,
    });
    expect(result).toMatchObject({ timedOut: true, exitCode: 137, stdout: 'started\n' });
    await tracker.expectNoSurvivors();
  });

  test('cancelSignal kills the process and rejects with an aborted ExecError', async () => {
    await using env = await connected();
    const controller = new AbortController();
    const running = env.client.run(['sh', '-c', 'echo started; sleep 600'], {
      cwd: dir,
      cancelSignal: controller.signal,
    });
    await waitFor(async () =>
      (await env.client.listProcesses()).processes.some((p) => p.state === 'running'),
    );
    controller.abort();
    const error = await running.catch((e: unknown) => e);
    expect(ExecError.is(error) && error.code).toBe('aborted');
    await waitFor(async () =>
      (await env.client.listProcesses()).processes.every((p) => p.state !== 'running'),
    );
    await tracker.expectNoSurvivors();
  });

  test('an abort while the start is in flight kills the process once it started', async () => {
    await using env = await connected();
    const controller = new AbortController();
    // Aborted right after the call: `process/start` is then already on the wire.
    const running = env.client.run(['sleep', '600'], { cwd: dir, cancelSignal: controller.signal });
    controller.abort();
    const error = await running.catch((e: unknown) => e);
    expect(ExecError.is(error) && error.code).toBe('aborted');
    const [entry] = (await env.client.listProcesses()).processes;
    expect(entry?.processId).toMatch(/^run-/);
    if (entry?.pid !== undefined) tracker.add(entry.pid);
    await tracker.expectNoSurvivors();
    await waitFor(async () =>
      (await env.client.listProcesses()).processes.every((p) => p.state !== 'running'),
    );
  });

  test('an already aborted signal starts nothing', async () => {
    await using env = await connected();
    const error = await env.client
      .run(['true'], { cwd: dir, cancelSignal: AbortSignal.abort() })
      .catch((e: unknown) => e);
    expect(ExecError.is(error) && error.code).toBe('aborted');
    expect((await env.client.listProcesses()).processes).toEqual([]);
  });

  test('maxOutputBytes bounds what is kept and sets truncated', async () => {
    await using env = await connected();
    const result = await env.client.run(['sh', '-c', 'head -c 100000 /dev/zero | tr "\\0" x'], {
      cwd: dir,
      maxOutputBytes: 1000,
    });
    expect(result.stdout).toBe('x'.repeat(1000));
    expect(result.truncated).toBe(true);
    expect(result.exitCode).toBe(0);
  });

  test('bad options are refused before anything starts', async () => {
    await using env = await connected();
    await expect(env.client.run([], { cwd: dir })).rejects.toThrow(RangeError);
    await expect(env.client.run(['true'], { cwd: 'relative' })).rejects.toThrow(RangeError);
    await expect(env.client.run(['true'], { cwd: dir, timeoutMs: -1 })).rejects.toThrow(RangeError);
    expect((await env.client.listProcesses()).processes).toEqual([]);
  });
});
