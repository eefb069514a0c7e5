// Spec §8.4 (initialize.rs, websocket.rs, health.rs) and §2.1/§2.5 transport rules, over real sockets.
import { request } from 'node:http';
import { captureLogger, waitFor } from '@execd/test-kit';
import { afterEach, describe, expect, test } from 'vitest';
import { localEnvironmentInfo, startExecServer } from '../../src/server/index.ts';
import { RawWsClient } from '../helpers/raw-ws-client.ts';
import { startTestServer } from '../helpers/test-server.ts';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const clients: RawWsClient[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

async function connect(
  url: string,
  options?: Parameters<typeof RawWsClient.connect>[1],
): Promise<RawWsClient> {
  const client = await RawWsClient.connect(url, options);
  clients.push(client);
  return client;
}

function httpGet(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url.replace(/^ws:/, 'http:'), { headers, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function upgradeStatus(url: string, headers: Record<string, string>): Promise<number | 'open'> {
  try {
    const client = await connect(url, { headers });
    await client.close();
    return 'open';
  } catch (error) {
    return (error as { status?: number }).status ?? -1;
  }
}

describe('handshake over a websocket', () => {
  test('exec_server_accepts_initialize: the session id is a UUID v4, replies are text frames', async () => {
    await using server = await startTestServer({ fake: true });
    const client = await connect(server.url);
    const result = await client.initialize();
    expect(result.sessionId).toMatch(UUID_V4);
    expect(result.environmentInfo).toMatchObject({ shell: { name: expect.any(String) } });
    expect(client.frames.every((frame) => !frame.binary)).toBe(true);
  });

  test('exec_server_rejects_pipelined_requests_before_initialized (wire order kept, 32 lanes)', async () => {
    await using server = await startTestServer({ fake: true, concurrentRequests: 32 });
    const client = await connect(server.url);
    const early = client.request('environment/info', {});
    const init = client.request('initialize', { clientName: 't', resumeSessionId: null });
    const beforeInitialized = client.request('environment/info', {});
    expect(await client.errorOf(early)).toEqual({
      code: -32600,
      message: 'client must call initialize before using environment info methods',
    });
    expect((await client.response(init)).result).toMatchObject({ sessionId: expect.stringMatching(UUID_V4) });
    expect(await client.errorOf(beforeInitialized)).toEqual({
      code: -32600,
      message: 'client must send initialized before using environment info methods',
    });
    const ids = client.frames.map((frame) => frame.message.id);
    expect(ids).toEqual([early, init, beforeInitialized]);
    client.notify('initialized');
    expect(await client.call('environment/status', {})).toEqual({ status: 'ready' });
  });

  test('connection_accepts_pipelined_scalar_requests: answered in order', async () => {
    await using server = await startTestServer({ fake: true });
    const client = await connect(server.url);
    await client.initialize();
    const ids = [
      client.request('environment/info', {}),
      client.request('environment/info'),
      client.request('environment/status', {}),
    ];
    const last = await client.response(ids[2]!);
    expect(last.result).toEqual({ status: 'ready' });
    expect(client.frames.slice(-3).map((frame) => frame.message.id)).toEqual(ids);
  });

  test('remote environment/info equals the local EnvironmentInfo; environment/status is ready', async () => {
    await using server = await startTestServer({ fake: true });
    const client = await connect(server.url);
    await client.initialize();
    const info = await client.call('environment/info', {});
    expect(info).toEqual(JSON.parse(JSON.stringify(localEnvironmentInfo())));
    expect(info.capabilities).toMatchObject({
      processResize: true,
      processList: true,
      retentionGapReporting: true,
      shellSnapshotV2: true,
    });
    expect(await client.call('environment/status', {})).toEqual({ status: 'ready' });
  });
});

describe('framing', () => {
  test('exec_server_reports_malformed_websocket_json_and_keeps_running', async () => {
    await using server = await startTestServer({ fake: true });
    const client = await connect(server.url);
    client.sendRaw('not-json', false);
    const error = await client.response(-1);
    expect(error.error).toMatchObject({ code: -32600 });
    expect((error.error as { message: string }).message).toMatch(
      /^failed to parse websocket JSON-RPC message from exec-server websocket 127\.0\.0\.1:\d+: /,
    );
    expect((await client.initialize()).sessionId).toMatch(UUID_V4);
  });

  test('exec_server_accepts_binary_websocket_json: answered as JSON text', async () => {
    await using server = await startTestServer({ fake: true });
    const client = await connect(server.url, { codec: 'binary-json' });
    expect((await client.initialize()).sessionId).toMatch(UUID_V4);
    expect(client.frames[0]?.binary).toBe(false);
  });

  test('msgpack clients get msgpack binary frames, bytes as bin', async () => {
    await using server = await startTestServer({ fake: true });
    const client = await connect(server.url, { codec: 'msgpack' });
    await client.initialize();
    const table = server.tables[0]!;
    await client.call('process/start', { processId: 'p', argv: ['x'], cwd: 'file:///', env: {}, tty: false });
    table.output('p', 'hi');
    const notification = await waitFor(() => client.notifications('process/output')[0]);
    const chunk = (notification.params as { chunk: unknown }).chunk;
    expect(chunk).toBeInstanceOf(Uint8Array);
    expect(Buffer.from(chunk as Uint8Array).toString()).toBe('hi');
    const read = await client.call<{ chunks: { chunk: Uint8Array }[] }>('process/read', { processId: 'p' });
    expect(Buffer.from(read.chunks[0]!.chunk).toString()).toBe('hi');
    expect(client.frames.every((frame) => frame.binary)).toBe(true);
  });

  test('json clients get base64 chunks in text frames', async () => {
    await using server = await startTestServer({ fake: true });
    const client = await connect(server.url);
    await client.initialize();
    await client.call('process/start', { processId: 'p', argv: ['x'], cwd: 'file:///', env: {}, tty: false });
    server.tables[0]!.output('p', 'hi');
    const notification = await waitFor(() => client.notifications('process/output')[0]);
    expect(notification.params).toEqual({ processId: 'p', seq: 1, stream: 'stdout', chunk: 'aGk=' });
  });

  test('a frame a byte over the limit is -32600 (id -1) and the connection stays open', async () => {
    await using server = await startTestServer({ fake: true, maxFrameBytes: 1024 });
    const client = await connect(server.url);
    const frame = JSON.stringify({ id: 1, method: 'environment/status', params: {}, pad: '' });
    client.sendRaw(
      JSON.stringify({
        id: 1,
        method: 'environment/status',
        params: {},
        pad: 'x'.repeat(1025 - frame.length),
      }),
      false,
    );
    expect((await client.response(-1)).error).toMatchObject({ code: -32600 });
    const atLimit = JSON.stringify({ id: 2, method: 'initialize', params: { clientName: 'c' }, pad: '' });
    client.sendRaw(
      JSON.stringify({
        id: 2,
        method: 'initialize',
        params: { clientName: 'c' },
        pad: 'x'.repeat(1024 - atLimit.length),
      }),
      false,
    );
    expect((await client.response(2)).result).toMatchObject({ sessionId: expect.stringMatching(UUID_V4) });
  });

  test('a frame beyond the oversize margin closes the connection with 1009', async () => {
    await using server = await startTestServer({ fake: true, maxFrameBytes: 1024 });
    const client = await connect(server.url);
    client.sendRaw(new Uint8Array(1024 + 1024 * 1024 + 1));
    expect((await client.closed).code).toBe(1009);
  });

  test('websocket_connection_sends_configured_ping', async () => {
    await using server = await startTestServer({ fake: true, keepaliveIntervalMs: 25 });
    const client = await connect(server.url);
    await waitFor(() => client.pings >= 2, { what: 'two pings' });
  });

  test('a peer that stops answering after it has read everything is dropped by the keepalive alone', async () => {
    const { logger, records } = captureLogger();
    await using server = await startTestServer({ fake: true, keepaliveIntervalMs: 25, logger });
    const stale = await connect(server.url);
    await stale.initialize();
    // Pongs after the initialize response: the peer has read all the server sent.
    const seen = stale.pings;
    await waitFor(() => stale.pings >= seen + 2, { what: 'two pings answered' });
    stale.pause();
    await waitFor(
      () => records.some((record) => record.message === 'peer stopped answering pings; dropping connection'),
      {
        what: 'the keepalive to drop the silent peer',
      },
    );
    stale.resume();
    await stale.closed;
  });

  test('a peer that stops answering pings is dropped and its session can be resumed', async () => {
    await using server = await startTestServer({ fake: true, keepaliveIntervalMs: 25 });
    const stale = await connect(server.url);
    const { sessionId } = await stale.initialize();
    stale.pause(); // no more pongs: the server must notice and detach
    const fresh = await connect(server.url);
    const resumed = await waitFor(
      async () => {
        const id = fresh.request('initialize', { clientName: 't', resumeSessionId: sessionId });
        const reply = await fresh.response(id);
        return 'result' in reply ? reply.result : undefined;
      },
      { what: 'the stale connection to be dropped' },
    );
    expect(resumed).toMatchObject({ sessionId });
    stale.resume();
  });
});

describe('protocol violations close the connection', () => {
  test('an unexpected notification closes the connection', async () => {
    await using server = await startTestServer({ fake: true });
    const client = await connect(server.url);
    await client.initialize();
    client.notify('process/output', {});
    expect((await client.closed).code).toBe(1002);
  });

  test('`initialized` before `initialize` closes the connection', async () => {
    await using server = await startTestServer({ fake: true });
    const client = await connect(server.url);
    client.notify('initialized');
    const closed = await client.closed;
    expect(closed).toEqual({ code: 1002, reason: 'received `initialized` notification before `initialize`' });
  });

  test('a response with an unknown id closes the connection', async () => {
    await using server = await startTestServer({ fake: true });
    const client = await connect(server.url);
    client.send({ id: 77, result: {} });
    expect((await client.closed).code).toBe(1002);
  });

  test('an error object from the client closes the connection', async () => {
    await using server = await startTestServer({ fake: true });
    const client = await connect(server.url);
    client.send({ id: 77, error: { code: 1, message: 'x' } });
    expect((await client.closed).code).toBe(1002);
  });

  test('unknown methods are -32601 with the original text and the connection stays open', async () => {
    await using server = await startTestServer({ fake: true });
    const client = await connect(server.url);
    const id = client.request('fs/unwatchMissing', { watchId: 1 });
    expect(await client.errorOf(id)).toEqual({
      code: -32601,
      message: 'exec-server stub does not implement `fs/unwatchMissing` yet',
    });
    expect((await client.initialize()).sessionId).toMatch(UUID_V4);
  });
});

describe('http endpoints and security', () => {
  test('exec_server_serves_readyz_alongside_websocket_endpoint', async () => {
    await using server = await startTestServer({ fake: true });
    expect((await httpGet(`${server.url}/readyz`)).status).toBe(200);
    expect((await httpGet(`${server.url}/nope`)).status).toBe(404);
  });

  test('exec_server_rejects_browser_origin_websocket_handshake: 403', async () => {
    await using server = await startTestServer({ fake: true });
    expect(await upgradeStatus(server.url, { Origin: 'https://evil.example' })).toBe(403);
    expect((await httpGet(`${server.url}/readyz`, { Origin: 'https://evil.example' })).status).toBe(403);
  });

  test('with a token the upgrade needs `Authorization: Bearer <token>`', async () => {
    const { logger, records } = captureLogger();
    await using server = await startTestServer({ fake: true, authToken: 's3cret-token', logger });
    expect(await upgradeStatus(server.url, {})).toBe(401);
    expect(await upgradeStatus(server.url, { Authorization: 'Bearer wrong' })).toBe(401);
    expect(await upgradeStatus(server.url, { Authorization: 'Basic s3cret-token' })).toBe(401);
    expect(await upgradeStatus(server.url, { Authorization: 'Bearer s3cret-token' })).toBe('open');
    expect(await upgradeStatus(server.url, { Authorization: 'bearer s3cret-token' })).toBe('open');
    expect(JSON.stringify(records)).not.toContain('s3cret-token');
  });

  test('listening on a non-loopback address without a token is refused', async () => {
    await expect(startExecServer({ listen: 'ws://0.0.0.0:0' })).rejects.toMatchObject({
      code: 'unsupported',
      message: expect.stringContaining('without an auth token'),
    });
    await using server = await startExecServer({ listen: 'ws://0.0.0.0:0', authToken: 't' });
    expect(server.url).toMatch(/^ws:\/\/0\.0\.0\.0:\d+$/);
  });
});
