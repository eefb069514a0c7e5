// The `execd-server` command as a real child process: one URL line, JSON logs on stderr, the
// original's --listen errors, auth, and a clean exit 0 on SIGTERM/SIGINT with no surviving children.
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileUri } from '@execd/protocol';
import { CliChild, listedFds, ProcessTracker, waitFor } from '@execd/test-kit';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { LAUNCHER_ENV_VAR, launcherEnv } from '../../src/cli/launcher-env.ts';
import { buildCli } from '../helpers/cli.ts';
import { RawWsClient } from '../helpers/raw-ws-client.ts';

let cli: Awaited<ReturnType<typeof buildCli>>;
const tracker = new ProcessTracker();
const CWD = pathToFileUri(process.cwd());

beforeAll(async () => {
  cli = await buildCli();
}, 120_000);

afterAll(async () => {
  await cli?.remove();
});

function envWithout(name: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  delete env[name];
  return env;
}

async function readText(client: RawWsClient, processId: string): Promise<string> {
  let text = '';
  let after = 0;
  for (;;) {
    const read = await client.call<{ chunks: { chunk: string }[]; nextSeq: number; closed: boolean }>(
      'process/read',
      {
        processId,
        afterSeq: after,
        waitMs: 2_000,
      },
    );
    for (const chunk of read.chunks) text += Buffer.from(chunk.chunk, 'base64').toString();
    after = read.nextSeq - 1;
    if (read.closed) return text;
  }
}

describe('execd-server', () => {
  test.each(['SIGTERM', 'SIGINT'] as const)(
    'prints exactly one URL line, logs JSON to stderr, and on %s exits 0 leaving no child behind',
    async (signal) => {
      await using server = new CliChild(cli.script, ['--log-level', 'debug'], {
        env: envWithout('EXECD_AUTH_TOKEN'),
      });
      const url = await server.firstLine();
      expect(url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
      await using client = await RawWsClient.connect(url);
      await client.initialize();
      const start = (processId: string, argv: string[], tty = false) =>
        client.call('process/start', { processId, argv, cwd: CWD, env: {}, tty });
      await start('pipes', ['sh', '-c', 'sleep 60 & sleep 60']);
      await start('pty', ['sh', '-c', 'sleep 60'], true);
      const list = await client.call<{ processes: { pid?: number }[] }>('process/list', {});
      expect(list.processes).toHaveLength(2);
      for (const entry of list.processes) if (entry.pid !== undefined) tracker.add(entry.pid);
      expect(tracker.survivors().length).toBeGreaterThanOrEqual(2);

      server.child.kill(signal);
      expect(await server.exited).toEqual({ code: 0, signal: null });
      await tracker.expectNoSurvivors();
      expect(server.stdout).toBe(`${url}\n`);
      const records = server.logRecords();
      expect(records.length).toBeGreaterThan(0);
      expect(
        records.every((record) => typeof record.level === 'string' && typeof record.msg === 'string'),
      ).toBe(true);
      expect(records.some((record) => record.msg === 'exec-server shutdown complete')).toBe(true);
    },
  );

  test.each([
    [
      'http://127.0.0.1:1',
      'unsupported --listen URL `http://127.0.0.1:1`; expected `ws://IP:PORT` or `stdio`',
    ],
    ['ws://example.com:1', 'invalid websocket --listen URL `ws://example.com:1`; expected `ws://IP:PORT`'],
  ])('--listen %s fails with the original text', async (listen, message) => {
    await using server = new CliChild(cli.script, ['--listen', listen]);
    expect((await server.exited).code).toBe(1);
    expect(server.stderr).toContain(message);
    expect(server.stdout).toBe('');
  });

  test.each([
    [[], 'a fork server helper (python3 or perl, a child of the server)'],
    [['--no-fork-server'], 'the server itself'],
  ] as const)(
    'commands on pipes started with %j are forked by %s; SIGTERM leaves nothing',
    async (flags, _by) => {
      await using server = new CliChild(cli.script, ['--log-level', 'warn', ...flags], {
        env: envWithout('EXECD_AUTH_TOKEN'),
      });
      const url = await server.firstLine();
      await using client = await RawWsClient.connect(url);
      await client.initialize();
      await client.call('process/start', {
        processId: 'stat',
        argv: ['sh', '-c', 'cat /proc/$$/stat'],
        cwd: CWD,
        env: {},
        tty: false,
      });
      const stat = await readText(client, 'stat');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const parentStat = readFileSync(`/proc/${parent}/stat`, 'utf8');
      const grandparent = Number(parentStat.slice(parentStat.lastIndexOf(')') + 2).split(' ')[1]);
      if (flags.length === 0) {
        // python3 where the host has it, else perl.
        expect(['python3', 'perl']).toContain(readFileSync(`/proc/${parent}/comm`, 'utf8').trim());
        expect(grandparent).toBe(server.child.pid);
        tracker.add(parent);
      } else {
        expect(parent).toBe(server.child.pid);
      }
      const metrics = await (await fetch(`${url.replace('ws:', 'http:')}/metrics`)).text();
      expect(metrics).toContain(`execd_fork_server_up ${flags.length === 0 ? 1 : 0}\n`);
      expect(metrics).toContain(
        `execd_fork_server_commands_total{outcome="started"} ${flags.length === 0 ? 1 : 0}\n`,
      );
      server.child.kill('SIGTERM');
      expect(await server.exited).toEqual({ code: 0, signal: null });
      await tracker.expectNoSurvivors();
    },
  );

  test('bad usage exits 2 with the usage text', async () => {
    await using server = new CliChild(cli.script, ['--bogus']);
    expect((await server.exited).code).toBe(2);
    expect(server.stderr).toContain('Usage: execd-server');
  });

  test('a non-loopback address without a token is refused', async () => {
    await using server = new CliChild(cli.script, ['--listen', 'ws://0.0.0.0:0'], {
      env: envWithout('EXECD_AUTH_TOKEN'),
    });
    expect((await server.exited).code).toBe(1);
    expect(server.stderr).toContain('without an auth token');
  });

  test('EXECD_AUTH_TOKEN guards the upgrade and is not inherited by children', async () => {
    await using server = new CliChild(cli.script, ['--log-level', 'off'], {
      env: {
        ...process.env,
        EXECD_AUTH_TOKEN: 'tok-123',
      },
    });
    const url = await server.firstLine();
    await expect(RawWsClient.connect(url)).rejects.toMatchObject({ status: 401 });
    await using client = await RawWsClient.connect(url, { headers: { Authorization: 'Bearer tok-123' } });
    await client.initialize();
    const policy = { inherit: 'all', ignoreDefaultExcludes: true, exclude: [], set: {}, includeOnly: [] };
    await client.call('process/start', {
      processId: 'env',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion
      argv: ['sh', '-c', 'printf "%s" "${EXECD_AUTH_TOKEN:-unset}"'],
      cwd: CWD,
      env: {},
      envPolicy: policy,
      tty: false,
    });
    expect(await readText(client, 'env')).toBe('unset');
    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
  });

  test('--auth-token-file is read and trimmed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'execd-cli-'));
    try {
      await writeFile(join(dir, 'token'), 'file-token\n');
      await using server = new CliChild(cli.script, ['--auth-token-file', join(dir, 'token')], {
        env: envWithout('EXECD_AUTH_TOKEN'),
      });
      const url = await server.firstLine();
      await expect(
        RawWsClient.connect(url, { headers: { Authorization: 'Bearer wrong' } }),
      ).rejects.toMatchObject({ status: 401 });
      await using client = await RawWsClient.connect(url, {
        headers: { Authorization: 'Bearer file-token' },
      });
      expect((await client.initialize()).sessionId).toBeTruthy();
      server.child.kill('SIGTERM');
      expect((await server.exited).code).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test.skipIf(process.platform !== 'linux')(
    'commands inherit nothing the server was started with; a token file on an inherited fd still works',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'execd-cli-'));
      const leaked = openSync(join(dir, 'left-open-by-the-parent'), 'w');
      const token = openSync(join(dir, 'token'), 'w+');
      writeSync(token, 'fd-token\n', 0);
      try {
        // fds 100 and 101 of the server are open across exec, as a supervisor might leave them
        // (Node itself makes the lowest inherited ones close-on-exec, not these).
        await using server = new CliChild(cli.script, ['--auth-token-file', '/dev/fd/101'], {
          env: envWithout('EXECD_AUTH_TOKEN'),
          inheritFds: { 100: leaked, 101: token },
        });
        const url = await server.firstLine();
        await using client = await RawWsClient.connect(url, {
          headers: { Authorization: 'Bearer fd-token' },
        });
        await client.initialize();
        const listing = (processId: string, tty: boolean) =>
          client
            .call('process/start', {
              processId,
              argv: ['sh', '-c', 'ls -l /proc/$$/fd/'],
              cwd: CWD,
              env: {},
              tty,
            })
            .then(() => readText(client, processId));
        for (const text of [await listing('pipes', false), await listing('pty', true)]) {
          expect(text).toContain('0 -> ');
          expect(text).not.toContain('left-open-by-the-parent');
          expect(listedFds(text)).toEqual(['0', '1', '2']);
        }
        server.child.kill('SIGTERM');
        expect((await server.exited).code).toBe(0);
      } finally {
        closeSync(leaked);
        closeSync(token);
        await rm(dir, { recursive: true, force: true });
      }
    },
  );

  test('--allowed-host adds a name the server answers to; other names get 421', async () => {
    await using server = new CliChild(cli.script, ['--log-level', 'off', '--allowed-host', 'execd.test'], {
      env: envWithout('EXECD_AUTH_TOKEN'),
    });
    const url = await server.firstLine();
    await using client = await RawWsClient.connect(url, { headers: { host: 'execd.test' } });
    expect((await client.initialize()).sessionId).toBeTruthy();
    await expect(RawWsClient.connect(url, { headers: { host: 'rebind.test' } })).rejects.toMatchObject({
      status: 421,
    });
    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
  });

  test('--listen stdio speaks NDJSON on stdin/stdout and exits 0 at EOF, killing its processes', async () => {
    await using server = new CliChild(cli.script, ['--listen', 'stdio', '--log-level', 'off']);
    const lines = (): Record<string, unknown>[] =>
      server.stdout
        .split('\n')
        .filter((line) => line.length > 0)
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    server.child.stdin.write(
      `${JSON.stringify({ id: 1, method: 'initialize', params: { clientName: 'c' } })}\n`,
    );
    server.child.stdin.write('{"method":"initialized","params":{}}\n');
    server.child.stdin.write(
      `${JSON.stringify({ id: 2, method: 'process/start', params: { processId: 'p', argv: ['sleep', '60'], cwd: CWD, env: {}, tty: false } })}\n`,
    );
    server.child.stdin.write('{"id":3,"method":"process/list"}\n');
    const list = await waitFor(() => lines().find((line) => line.id === 3));
    for (const entry of (list.result as { processes: { pid: number }[] }).processes) tracker.add(entry.pid);
    expect(lines().find((line) => line.id === 1)?.result).toMatchObject({ sessionId: expect.any(String) });
    server.child.stdin.end();
    expect(await server.exited).toEqual({ code: 0, signal: null });
    await tracker.expectNoSurvivors();
  });

  test('a stdio client that stops reading holds its children back and then gets every byte', async () => {
    const total = 16 * 1024 * 1024;
    await using server = new CliChild(cli.script, ['--listen', 'stdio', '--log-level', 'debug']);
    const send = (message: unknown) => server.child.stdin.write(`${JSON.stringify(message)}\n`);
    send({ id: 1, method: 'initialize', params: { clientName: 'c' } });
    send({ method: 'initialized', params: {} });
    await waitFor(() => server.stdout.includes('"id":1'));
    server.child.stdout.pause();
    send({
      id: 2,
      method: 'process/start',
      params: {
        processId: 'flood',
        argv: ['head', '-c', String(total), '/dev/zero'],
        cwd: CWD,
        env: {},
        tty: false,
      },
    });
    await waitFor(() => server.stderr.includes("holding its processes' output back"), {
      what: 'the output to be held back',
      timeoutMs: 60_000,
    });
    server.child.stdout.resume();
    await waitFor(() => server.stdout.includes('process/closed'), {
      what: 'the flood to close',
      timeoutMs: 60_000,
      intervalMs: 100,
    });
    const notifications = server.stdout
      .split('\n')
      .filter((line) => line.includes('"method":"process/'))
      .map((line) => JSON.parse(line) as { method: string; params: Record<string, unknown> });
    const bytes = notifications
      .filter((message) => message.method === 'process/output')
      .reduce((sum, message) => sum + Buffer.from(String(message.params.chunk), 'base64').length, 0);
    expect(bytes).toBe(total);
    expect(notifications.map((message) => message.params.seq)).toEqual(notifications.map((_, i) => i + 1));
    expect(notifications.at(-2)).toMatchObject({ method: 'process/exited', params: { exitCode: 0 } });
    server.child.stdin.end();
    expect((await server.exited).code).toBe(0);
  });
});

/** The environment of `env` run by a server started with `extra`, inheriting everything. */
async function commandEnv(extra: Record<string, string>, flags: string[] = []) {
  const env = envWithout('EXECD_AUTH_TOKEN', extra);
  await using server = new CliChild(cli.script, ['--log-level', 'warn', ...flags], { env });
  const url = await server.firstLine();
  await using client = await RawWsClient.connect(url);
  await client.initialize();
  const policy = { inherit: 'all', ignoreDefaultExcludes: true, exclude: [], set: {}, includeOnly: [] };
  await client.call('process/start', {
    processId: 'env',
    argv: ['env'],
    cwd: CWD,
    env: {},
    envPolicy: policy,
    tty: false,
  });
  const text = await readText(client, 'env');
  // The server's initial environment, as glibc read it when the process started.
  const initial = readFileSync(`/proc/${server.child.pid}/environ`, 'utf8').split('\0');
  server.child.kill('SIGTERM');
  expect((await server.exited).code).toBe(0);
  return { names: text.split('\n').map((line) => line.slice(0, line.indexOf('='))), initial };
}

// What execd's launchers (`npm start`, the container image) give the server alone: glibc reads
// the malloc threshold when the server starts, and no command the server starts inherits it.
describe('the launcher environment', () => {
  test.each([[[]], [['--no-fork-server']]])(
    'the server starts with the malloc threshold and its commands never see it (%j)',
    async (flags) => {
      const { names, initial } = await commandEnv({ ...launcherEnv({}), EXECD_PROBE: 'kept' }, flags);
      expect(initial).toContain('MALLOC_MMAP_THRESHOLD_=131072');
      expect(names).toContain('EXECD_PROBE');
      expect(names).not.toContain('MALLOC_MMAP_THRESHOLD_');
      expect(names).not.toContain(LAUNCHER_ENV_VAR);
    },
  );

  test("a user's own malloc setting is inherited as any other variable", async () => {
    const { names } = await commandEnv({ MALLOC_MMAP_THRESHOLD_: '65536' });
    expect(names).toContain('MALLOC_MMAP_THRESHOLD_');
  });
});
