// Reverse connections (the original's accepted-websocket mode): a real `execd-server --connect`
// dials the host's acceptor; the host's client resumes the session when the socket drops, refuses
// a resume on the first connection and a second concurrent replacement, and the executor stops
// redialling (and reaps its processes) on SIGTERM.
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startReverseExecServer } from '@execd/exec-server/server';
import { ExecError, utf8 } from '@execd/protocol';
import type { ExecProcessEvent } from '@execd/protocol/contract';
import {
  CliChild,
  collectEvents,
  execParams,
  FaultProxy,
  ProcessTracker,
  readUntil,
  waitFor,
} from '@execd/test-kit';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { INITIAL_RESUME_MESSAGE, REPLACEMENT_IN_PROGRESS_MESSAGE } from '../src/accepted-channel-source.ts';
import { acceptExecServers, ENVIRONMENT_ID_HEADER } from '../src/exec-server-acceptor.ts';
import { ExecServerClient } from '../src/exec-server-client.ts';
import { webSocketChannel } from '../src/websocket-channel.ts';
import { FAST_RECOVERY } from './helpers/harness.ts';

/** The built CLI of @execd/exec-server (a devDependency), as stdio-transport.test.ts runs it. */
const SERVER_CLI = join(
  dirname(createRequire(import.meta.url).resolve('@execd/exec-server/package.json')),
  'dist/cli/execd-server.js',
);

const tracker = new ProcessTracker();
let scratch = '';

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'execd-accepted-'));
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

function expectConsecutive(events: readonly ExecProcessEvent[]): void {
  const seqs = events.flatMap((e) => (e.type === 'failed' ? [] : [e.seq]));
  expect(seqs).toEqual(seqs.map((_, i) => i + 1));
}

function stdoutText(events: readonly ExecProcessEvent[]): string {
  return Buffer.concat(
    events.flatMap((e) => (e.type === 'output' && e.stream === 'stdout' ? [e.chunk] : [])),
  ).toString('utf8');
}

/** A raw socket dialled into the acceptor as environment `environmentId`, and the frames it got. */
async function rawDial(url: string, environmentId: string): Promise<{ socket: WebSocket; frames: Buffer[] }> {
  const socket = new WebSocket(url, { headers: { [ENVIRONMENT_ID_HEADER]: environmentId } });
  const frames: Buffer[] = [];
  socket.on('message', (data: Buffer) => frames.push(data));
  await once(socket, 'open');
  return { socket, frames };
}

describe('reverse connection (execd-server --connect)', () => {
  test('the host resumes the session after the socket drops: every byte in order, writes accepted; SIGTERM reaps', async () => {
    await using acceptor = await acceptExecServers({
      path: '/executors',
      token: 'sesame',
      client: FAST_RECOVERY,
    });
    await using proxy = await FaultProxy.start({ target: acceptor.url });
    const tokenFile = join(scratch, 'token');
    await writeFile(tokenFile, 'sesame\n', { mode: 0o600 });
    await using server = new CliChild(SERVER_CLI, [
      '--connect',
      `${proxy.url}/executors`,
      '--connect-token-file',
      tokenFile,
      '--environment-id',
      'builder-1',
      '--log-level',
      'debug',
    ]);
    const { environmentId, client } = await acceptor.next();
    expect(environmentId).toBe('builder-1');
    expect(acceptor.client('builder-1')).toBe(client);
    const sessionId = client.sessionId;

    // 300 numbered lines over about 3 s, then one line read from stdin.
    const script =
      'i=0; while [ $i -lt 300 ]; do echo "n:$i"; i=$((i+1)); sleep 0.01; done; read line; echo "line:$line"';
    const proc = await client.start(execParams('counter', ['sh', '-c', script], { pipeStdin: true }));
    const collected = collectEvents(proc);
    await readUntil(proc, { until: (o) => o.text.includes('n:20\n') });

    proxy.drop();
    await waitFor(() => client.state === 'recovering', { what: 'the host to notice the drop' });
    await waitFor(() => client.state === 'ready', { what: 'the executor to dial again and be resumed' });
    expect(client.sessionId).toBe(sessionId);
    expect(await proc.write(utf8('after\n'))).toEqual({ status: 'accepted' });

    const events = await collected;
    expect(events.filter((e) => e.type === 'failed')).toEqual([]);
    expectConsecutive(events);
    const expected = `${Array.from({ length: 300 }, (_, i) => `n:${i}\n`).join('')}line:after\n`;
    expect(stdoutText(events)).toBe(expected);
    expect(events.at(-1)).toMatchObject({ type: 'closed' });
    expect(server.stdout).toBe('');

    // SIGTERM: the executor terminates its processes, stops dialling and exits 0.
    await client.start(execParams('sleeper', ['sh', '-c', 'sleep 60 & sleep 60']));
    const list = await client.listProcesses();
    for (const entry of list.processes) if (entry.pid !== undefined) tracker.add(entry.pid);
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    await tracker.expectNoSurvivors();
    await waitFor(() => client.state !== 'ready', { what: 'the host to see the executor leave' });
    const records = server.logRecords();
    expect(records.filter((r) => r.msg === 'connected to the host')).toHaveLength(2);
    expect(records.some((r) => r.msg === 'exec-server shutdown complete')).toBe(true);
  });

  test('a second replacement while one is being tried is closed with the original text', async () => {
    await using acceptor = await acceptExecServers({ client: FAST_RECOVERY });
    await using server = await startReverseExecServer({
      connect: acceptor.url,
      environmentId: 'env-a',
      redialInitialDelayMs: 50,
      redialMaxDelayMs: 200,
    });
    const { client } = await acceptor.next();
    const sessionId = client.sessionId;

    // The first replacement retires the executor's socket and holds the slot (it never answers).
    const { socket: first } = await rawDial(acceptor.url, 'env-a');
    await waitFor(() => client.state === 'recovering', { what: 'the replacement to retire the socket' });
    const { socket: second } = await rawDial(acceptor.url, 'env-a');
    const [code, reason] = (await once(second, 'close')) as [number, Buffer];
    expect(code).toBe(1013);
    expect(reason.toString()).toBe(REPLACEMENT_IN_PROGRESS_MESSAGE);

    // Once the stuck replacement is gone, the executor's own redial resumes the session.
    first.close();
    await waitFor(() => client.state === 'ready', { what: 'the executor to be resumed' });
    expect(client.sessionId).toBe(sessionId);
    const run = await client.run(['sh', '-c', 'echo resumed']);
    expect(run.stdout).toBe('resumed\n');
    expect(server.url).toBe(acceptor.url);
  });

  test('a replacement answered -32010 is closed and the next one resumes', async () => {
    await using acceptor = await acceptExecServers({ client: { ...FAST_RECOVERY, codec: 'json' } });
    await using server = await startReverseExecServer({
      connect: acceptor.url,
      environmentId: 'env-b',
      redialInitialDelayMs: 50,
      redialMaxDelayMs: 200,
    });
    const { client } = await acceptor.next();
    // A peer that claims the session is attached elsewhere, as a server does (-32010).
    const { socket: refusing, frames } = await rawDial(acceptor.url, 'env-b');
    const frame = await waitFor(() => frames[0], { what: 'the resume request' });
    const closed = once(refusing, 'close');
    const request = JSON.parse(frame.toString()) as { id: number; method: string; params: unknown };
    expect(request).toMatchObject({ method: 'initialize', params: { resumeSessionId: client.sessionId } });
    refusing.send(
      JSON.stringify({ id: request.id, error: { code: -32010, message: 'session already attached' } }),
    );
    await closed;
    await waitFor(() => client.state === 'ready', { what: 'the executor to be resumed' });
    expect((await client.run(['sh', '-c', 'echo ok'])).stdout).toBe('ok\n');
    await server.close();
  });

  test('the first accepted connection cannot resume a session', async () => {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await once(wss, 'listening');
    const address = wss.address() as { port: number };
    const socket = new WebSocket(`ws://127.0.0.1:${address.port}`);
    await once(socket, 'open');
    const error = await ExecServerClient.accept(webSocketChannel(socket), { resumeSessionId: 'abc' }).catch(
      (e: unknown) => e,
    );
    expect(ExecError.is(error) && error.code).toBe('protocol');
    expect((error as Error).message).toBe(INITIAL_RESUME_MESSAGE);
    if (socket.readyState !== WebSocket.CLOSED) await once(socket, 'close');
    for (const peer of wss.clients) peer.terminate();
    await new Promise<void>((done) => wss.close(() => done()));
  });

  test('an executor without the right token is refused (401)', async () => {
    await using acceptor = await acceptExecServers({ token: 'right' });
    const { port } = new URL(acceptor.url);
    const request = httpRequest({
      host: '127.0.0.1',
      port,
      path: '/',
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
        authorization: 'Bearer wrong',
      },
    });
    request.end();
    const [response] = (await once(request, 'response')) as [IncomingMessage];
    response.resume();
    await once(response, 'end');
    expect(response.statusCode).toBe(401);
  });
});
