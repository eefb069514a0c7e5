// Spec §2.1 stdio transport and the §8.6 connection/transport tests, over in-memory streams.
import { PassThrough } from 'node:stream';
import { pathToFileUri } from '@execd/protocol';
import { captureLogger, ProcessTracker, waitFor } from '@execd/test-kit';
import { afterEach, describe, expect, test } from 'vitest';
import { type RunningExecServer, startExecServer } from '../../src/server/index.ts';

const tracker = new ProcessTracker();
const servers: RunningExecServer[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

interface StdioHarness {
  readonly server: RunningExecServer;
  readonly input: PassThrough;
  readonly messages: Record<string, unknown>[];
  readonly logs: ReturnType<typeof captureLogger>['records'];
  write(text: string): void;
  response(id: number): Promise<Record<string, unknown>>;
}

async function startStdio(maxFrameBytes?: number): Promise<StdioHarness> {
  const input = new PassThrough();
  const output = new PassThrough();
  const { logger, records } = captureLogger();
  const server = await startExecServer({
    listen: 'stdio',
    stdio: { input, output },
    logger,
    ...(maxFrameBytes === undefined ? {} : { maxFrameBytes }),
  });
  servers.push(server);
  const messages: Record<string, unknown>[] = [];
  let pending = '';
  output.setEncoding('utf8');
  output.on('data', (chunk: string) => {
    pending += chunk;
    for (let newline = pending.indexOf('\n'); newline >= 0; newline = pending.indexOf('\n')) {
      messages.push(JSON.parse(pending.slice(0, newline)) as Record<string, unknown>);
      pending = pending.slice(newline + 1);
    }
  });
  return {
    server,
    input,
    messages,
    logs: records,
    write: (text) => input.write(text),
    response: (id) =>
      waitFor(() => messages.find((message) => message.id === id), { what: `response ${id}` }),
  };
}

/** A request line of exactly `size` bytes (padding goes into an ignored top-level field). */
function lineOfSize(id: number, size: number): string {
  const base = JSON.stringify({ id, method: 'initialize', params: { clientName: 'c' }, pad: '' });
  return JSON.stringify({
    id,
    method: 'initialize',
    params: { clientName: 'c' },
    pad: 'x'.repeat(size - base.length),
  });
}

describe('stdio transport', () => {
  test('stdio_listen_transport_serves_initialize', async () => {
    const stdio = await startStdio();
    expect(stdio.server.url).toBe('stdio');
    stdio.write(
      `${JSON.stringify({ id: 1, method: 'initialize', params: { clientName: 'c', resumeSessionId: null } })}\n`,
    );
    expect((await stdio.response(1)).result).toMatchObject({ sessionId: expect.any(String) });
    stdio.write('{"method":"initialized","params":{}}\r\n\n   \r\n');
    stdio.write('{"id":2,"method":"environment/status"}\n');
    expect((await stdio.response(2)).result).toEqual({ status: 'ready' });
  });

  test.each(['\n', '\r\n'])('stdio_connection_accepts_message_at_size_limit (%j)', async (terminator) => {
    const stdio = await startStdio(256);
    const line = lineOfSize(1, 256);
    expect(Buffer.byteLength(line)).toBe(256);
    stdio.write(line + terminator);
    expect((await stdio.response(1)).result).toMatchObject({ sessionId: expect.any(String) });
  });

  test.each(['\n', '\r\n'])(
    'a terminated line a byte over the limit ends the connection (%j)',
    async (terminator) => {
      const stdio = await startStdio(256);
      stdio.write(lineOfSize(1, 257) + terminator);
      await stdio.server.closed;
      expect(stdio.messages).toEqual([]);
      expect(
        stdio.logs.some(
          (record) =>
            record.fields?.reason ===
            'JSON-RPC message from exec-server stdio exceeds maximum length of 256 bytes',
        ),
      ).toBe(true);
    },
  );

  test('stdio_connection_rejects_overlong_unterminated_message without waiting for its end', async () => {
    const stdio = await startStdio(256);
    stdio.write('{"id":1,"method":"initialize","params":{"clientName":"');
    stdio.write('x'.repeat(300));
    await stdio.server.closed;
    expect(
      stdio.logs.some(
        (record) =>
          record.fields?.reason ===
          'JSON-RPC message from exec-server stdio exceeds maximum length of 256 bytes',
      ),
    ).toBe(true);
  });

  test('a malformed line gets an id -1 error and the connection stays open', async () => {
    const stdio = await startStdio();
    stdio.write('not-json\n');
    const error = await stdio.response(-1);
    expect(error.error).toMatchObject({
      code: -32600,
      message: expect.stringMatching(/^failed to parse JSON-RPC message from exec-server stdio: /),
    });
    stdio.write(`${JSON.stringify({ id: 1, method: 'initialize', params: { clientName: 'c' } })}\n`);
    expect((await stdio.response(1)).result).toMatchObject({ sessionId: expect.any(String) });
  });

  test('EOF shuts everything down and terminates every process', async () => {
    const stdio = await startStdio();
    stdio.write(
      `${JSON.stringify({ id: 1, method: 'initialize', params: { clientName: 'c' } })}\n{"method":"initialized"}\n`,
    );
    await stdio.response(1);
    const start = {
      processId: 'p',
      argv: ['sh', '-c', 'sleep 30 & sleep 30'],
      cwd: pathToFileUri(process.cwd()),
      env: {},
      tty: false,
    };
    stdio.write(`${JSON.stringify({ id: 2, method: 'process/start', params: start })}\n`);
    expect((await stdio.response(2)).result).toEqual({ processId: 'p', sandboxType: 'none' });
    stdio.write('{"id":3,"method":"process/list"}\n');
    const list = (await stdio.response(3)).result as { processes: { pid: number }[] };
    for (const entry of list.processes) tracker.add(entry.pid);
    stdio.input.end();
    await stdio.server.closed;
    await tracker.expectNoSurvivors();
  });

  test('a protocol violation ends the stdio connection (and the server)', async () => {
    const stdio = await startStdio();
    stdio.write('{"method":"initialized"}\n');
    await stdio.server.closed;
  });
});
