// The stdio-command transport: the client spawns the real `execd-server --listen stdio` (the
// built CLI of @execd/exec-server, a devDependency) and speaks newline-delimited JSON over its
// stdin/stdout.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { ExecError, fromUtf8 } from '@execd/protocol';
import { collectEvents, execParams, waitFor } from '@execd/test-kit';
import { describe, expect, test } from 'vitest';
import { ExecServerClient } from '../src/exec-server-client.ts';
import { tracker } from './helpers/harness.ts';

const SERVER_CLI = join(
  dirname(createRequire(import.meta.url).resolve('@execd/exec-server/package.json')),
  'dist/cli/execd-server.js',
);

const serverCommand = (): string[] => [
  process.execPath,
  SERVER_CLI,
  '--listen',
  'stdio',
  '--log-level',
  'off',
];

describe('stdio command transport', () => {
  test('initializes over the command and runs processes (JSON codec)', async () => {
    await using client = await ExecServerClient.connect({ command: serverCommand() });
    expect(client.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const result = await client.run(['sh', '-c', 'echo out; echo err >&2; exit 4']);
    expect(result).toMatchObject({ stdout: 'out\n', stderr: 'err\n', exitCode: 4 });

    const proc = await client.start(execParams('p1', ['sh', '-c', 'echo hi']));
    const events = await collectEvents(proc);
    expect(events.map((e) => (e.type === 'output' ? fromUtf8(e.chunk) : e.type))).toEqual([
      'hi\n',
      'exited',
      'closed',
    ]);
  });

  test('close() ends the command; the server kills its processes at EOF', async () => {
    const client = await ExecServerClient.connect({ command: { argv: serverCommand() } });
    try {
      await client.start(execParams('sleeper', ['sleep', '600']));
      let pid: number | undefined;
      await waitFor(async () => {
        pid = (await client.listProcesses()).processes[0]?.pid;
        return pid !== undefined;
      });
      tracker.add(pid!);
    } finally {
      await client.close();
    }
    await tracker.expectNoSurvivors();
  });

  test('a command that exits fails its processes and later calls (no resume over stdio)', async () => {
    await using client = await ExecServerClient.connect({ command: serverCommand() });
    const proc = await client.start(execParams('survivor', ['sleep', '600']));
    let pid: number | undefined;
    await waitFor(async () => {
      pid = (await client.listProcesses()).processes[0]?.pid;
      return pid !== undefined;
    });
    tracker.add(pid!);
    // Kill the server, as a dropped ssh connection would: the child's parent, or its grandparent
    // when the server's fork server (a python3 or perl helper) started it.
    const killServer =
      'p=$PPID; case "$(cat /proc/$p/comm)" in python3|perl) p=$(cut -d" " -f4 /proc/$p/stat);; esac; kill -KILL $p';
    await client.run(['sh', '-c', killServer]).catch(() => undefined);
    await waitFor(() => client.state === 'failed');
    expect(client.failure).toMatch(/^exec-server transport disconnected: .*exited \(signal SIGKILL\)/);
    const events = await collectEvents(proc);
    expect(events.at(-1)).toMatchObject({ type: 'failed' });
    const error = await client.environmentStatus().catch((e: unknown) => e);
    expect(ExecError.is(error) && error.code).toBe('transportClosed');
    // The server died without its EOF shutdown; its orphan is this test's to reap.
    process.kill(pid!, 'SIGKILL');
    await tracker.expectNoSurvivors();
  });

  test('a command that cannot be started rejects connect with transportClosed', async () => {
    const error = await ExecServerClient.connect({ command: ['/nonexistent/execd-server'] }).catch(
      (e: unknown) => e,
    );
    expect(ExecError.is(error) && error.code).toBe('transportClosed');
  });

  test('a command that exits at once rejects connect with its exit status and stderr', async () => {
    const error = await ExecServerClient.connect({
      command: ['sh', '-c', 'echo "ssh: connect to host nowhere port 22: Connection refused" >&2; exit 255'],
    }).catch((e: unknown) => e);
    expect(ExecError.is(error) && error.code).toBe('transportClosed');
    expect((error as Error).message).toMatch(
      /exited \(code 255\): ssh: connect to host nowhere port 22: Connection refused$/,
    );
  });

  test('a command that prints something else is killed and connect rejects', async () => {
    const error = await ExecServerClient.connect({
      command: ['sh', '-c', 'echo not-json; exec sleep 600'],
    }).catch((e: unknown) => e);
    expect(ExecError.is(error) && error.code).toBe('transportClosed');
    expect((error as Error).message).toMatch(/unreadable frame from the exec-server/);
  });

  test('options are checked: exactly one of url and command, json only', async () => {
    await expect(ExecServerClient.connect({})).rejects.toThrow(RangeError);
    await expect(ExecServerClient.connect({ url: 'ws://127.0.0.1:1', command: ['x'] })).rejects.toThrow(
      RangeError,
    );
    await expect(ExecServerClient.connect({ command: ['x'], codec: 'msgpack' })).rejects.toThrow(RangeError);
    await expect(ExecServerClient.connect({ command: [] })).rejects.toThrow(RangeError);
  });
});
