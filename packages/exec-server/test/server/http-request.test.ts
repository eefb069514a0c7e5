// `http/request` against a real HTTP origin on 127.0.0.1:0, through a real exec-server. Codes and
// the shape of results and deltas are what Codex 0.169.0's exec-server answered to the same calls.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from '@execd/test-kit';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { RawWsClient } from '../helpers/raw-ws-client.ts';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: string[];
  readonly body: string;
}

const BIG_BYTES = 3 * 1024 * 1024 + 5;
let origin: Server;
let base: string;
/** Responses held open by `/hang` until the origin closes. */
const hanging: ServerResponse[] = [];

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const url = new URL(req.url ?? '/', 'http://origin');
  switch (url.pathname) {
    case '/echo': {
      res.setHeader('x-multi', ['a', 'b']);
      res.setHeader('Content-Type', 'application/json');
      const seen: Seen = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.rawHeaders,
        body: Buffer.concat(chunks).toString(),
      };
      res.end(JSON.stringify(seen));
      return;
    }
    case '/redirect':
      res.writeHead(302, { location: '/echo?from=redirect' }).end('moved');
      return;
    case '/loop':
      res.writeHead(302, { location: '/loop' }).end();
      return;
    case '/big':
      res.writeHead(200, { 'content-length': BIG_BYTES }).end(Buffer.alloc(BIG_BYTES, 0x61));
      return;
    case '/cut':
      res.writeHead(200, { 'content-length': 100 });
      res.write('partial', () => res.socket?.destroy());
      return;
    case '/hang':
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first');
      hanging.push(res);
      return;
    default:
      res.writeHead(404).end('nope');
  }
}

beforeAll(async () => {
  origin = createServer((req, res) => void handle(req, res));
  origin.listen(0, '127.0.0.1');
  await once(origin, 'listening');
  base = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const res of hanging.splice(0)) res.destroy();
  origin.closeAllConnections();
  origin.close();
  await once(origin, 'close');
});

async function connect(server: TestServer): Promise<RawWsClient> {
  const client = await RawWsClient.connect(server.url);
  await client.initialize();
  return client;
}

function request(params: Record<string, unknown>): Record<string, unknown> {
  return { method: 'GET', url: `${base}/echo`, headers: [], requestId: 'r', ...params };
}

function decode(base64: unknown): Buffer {
  return Buffer.from(base64 as string, 'base64');
}

interface Delta {
  requestId: string;
  seq: number;
  deltaBase64: string;
  done: boolean;
  error: string | null;
}

function deltas(client: RawWsClient, requestId: string): Delta[] {
  return client
    .notifications('http/request/bodyDelta')
    .map((message) => message.params as Delta)
    .filter((delta) => delta.requestId === requestId);
}

async function errorCode(client: RawWsClient, params: Record<string, unknown>): Promise<number> {
  return (await client.errorOf(client.request('http/request', request(params)))).code;
}

describe('http/request', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      fake: true,
      executorEnv: { H3_TOKEN: 'secret', H3_EMPTY: '', OPENAI_API_KEY: 'model-key' },
    });
  });
  afterAll(async () => {
    await server.close();
  });

  test('buffered: headers in order (lower-cased, env value appended), repeated response headers kept', async () => {
    await using client = await connect(server);
    const result = await client.call<{
      status: number;
      headers: { name: string; value: string }[];
      bodyBase64: string;
    }>(
      'http/request',
      request({
        headers: [
          { name: 'X-A', value: 'v' },
          { name: 'Authorization', value: 'Bearer ', valueEnvVar: 'H3_TOKEN' },
          { name: 'X-A', value: 'w' },
        ],
      }),
    );
    expect(result.status).toBe(200);
    expect(result.headers.filter((h) => h.name === 'x-multi')).toEqual([
      { name: 'x-multi', value: 'a' },
      { name: 'x-multi', value: 'b' },
    ]);
    expect(result.headers.map((h) => h.name)).toContain('content-type');
    const seen = JSON.parse(decode(result.bodyBase64).toString()) as Seen;
    // Repeated names go together, where the first one was (the original's order).
    expect(seen.headers.slice(0, 8)).toEqual([
      'x-a',
      'v',
      'x-a',
      'w',
      'authorization',
      'Bearer secret',
      'accept',
      '*/*',
    ]);
  });

  test('a body is sent with its length; the URL fragment is not', async () => {
    await using client = await connect(server);
    const result = await client.call<{ bodyBase64: string }>(
      'http/request',
      request({
        method: 'POST',
        url: `${base}/echo?q=1#frag`,
        bodyBase64: Buffer.from('hello').toString('base64'),
      }),
    );
    const seen = JSON.parse(decode(result.bodyBase64).toString()) as Seen;
    expect(seen).toMatchObject({ method: 'POST', url: '/echo?q=1', body: 'hello' });
    expect(seen.headers).toContain('content-length');
  });

  test('valueEnvVar: missing, empty and the executor credentials are -32602', async () => {
    await using client = await connect(server);
    for (const valueEnvVar of [
      'H3_MISSING',
      'H3_EMPTY',
      'OPENAI_API_KEY',
      'openai_api_key',
      'EXECD_AUTH_TOKEN',
    ])
      expect(await errorCode(client, { headers: [{ name: 'X', value: '', valueEnvVar }] })).toBe(-32602);
  });

  test('bad method, URL, scheme, header name or value are -32602; the server keeps serving', async () => {
    await using client = await connect(server);
    for (const bad of [
      { method: 'BAD METHOD' },
      { url: 'notaurl' },
      { url: 'ftp://127.0.0.1/' },
      { headers: [{ name: 'bad name', value: 'v' }] },
      { headers: [{ name: 'X', value: 'a\nb' }] },
    ])
      expect(await errorCode(client, bad)).toBe(-32602);
    expect(await client.call('environment/status', {})).toEqual({ status: 'ready' });
  });

  test('redirects: followed with a referer, returned as is with stop, a loop fails', async () => {
    await using client = await connect(server);
    const followed = await client.call<{ status: number; bodyBase64: string }>(
      'http/request',
      request({ url: `${base}/redirect` }),
    );
    const seen = JSON.parse(decode(followed.bodyBase64).toString()) as Seen;
    expect(seen.url).toBe('/echo?from=redirect');
    expect(seen.headers).toContain(`${base}/redirect`);
    const stopped = await client.call<{ status: number; headers: { name: string; value: string }[] }>(
      'http/request',
      request({ url: `${base}/redirect`, redirectPolicy: 'stop' }),
    );
    expect(stopped.status).toBe(302);
    expect(stopped.headers).toContainEqual({ name: 'location', value: '/echo?from=redirect' });
    expect(await errorCode(client, { url: `${base}/loop` })).toBe(-32603);
  });

  test('a refused connection and a deadline before the headers are -32603', async () => {
    await using client = await connect(server);
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const port = (closed.address() as AddressInfo).port;
    closed.close();
    await once(closed, 'close');
    expect(await errorCode(client, { url: `http://127.0.0.1:${port}/` })).toBe(-32603);
    // `/hang` sends its headers but never its end: the deadline covers the body too.
    expect(await errorCode(client, { url: `${base}/hang`, timeoutMs: 50 })).toBe(-32603);
  });

  test('streamed: the result first, then deltas of at most 1 MiB in seq order, then done', async () => {
    await using client = await connect(server);
    const id = client.request(
      'http/request',
      request({ url: `${base}/big`, streamResponse: true, requestId: 's1' }),
    );
    const response = await client.response(id);
    expect(response.result).toMatchObject({ status: 200, bodyBase64: '' });
    await waitFor(() => deltas(client, 's1').some((delta) => delta.done));
    const received = deltas(client, 's1');
    expect(received.map((delta) => delta.seq)).toEqual(received.map((_, index) => index + 1));
    const body = Buffer.concat(received.map((delta) => decode(delta.deltaBase64)));
    expect(body.byteLength).toBe(BIG_BYTES);
    expect(received.every((delta) => decode(delta.deltaBase64).byteLength <= 1024 * 1024)).toBe(true);
    expect(received.at(-1)).toMatchObject({ done: true, error: null, deltaBase64: '' });
    const firstDelta = client.frames.findIndex((frame) => frame.message.method === 'http/request/bodyDelta');
    expect(client.frames.findIndex((frame) => frame.message.id === id)).toBeLessThan(firstDelta);
  });

  test('a streamed body cut short ends with an error delta', async () => {
    await using client = await connect(server);
    await client.call(
      'http/request',
      request({ url: `${base}/cut`, streamResponse: true, requestId: 'cut' }),
    );
    await waitFor(() => deltas(client, 'cut').some((delta) => delta.done));
    const last = deltas(client, 'cut').at(-1);
    expect(last?.error).toEqual(expect.any(String));
    expect(await errorCode(client, { url: `${base}/cut` })).toBe(-32603);
  });

  test('a stream id is taken until its last delta; buffered requests may reuse it', async () => {
    await using client = await connect(server);
    await client.call(
      'http/request',
      request({ url: `${base}/hang`, streamResponse: true, requestId: 'dup' }),
    );
    expect(await errorCode(client, { streamResponse: true, requestId: 'dup' })).toBe(-32602);
    expect(await client.call('http/request', request({ requestId: 'dup' }))).toMatchObject({ status: 200 });
    await waitFor(() => deltas(client, 'dup').length === 1);
    for (const res of hanging.splice(0)) res.end('last');
    await waitFor(() => deltas(client, 'dup').some((delta) => delta.done));
    expect(
      await client.call('http/request', request({ streamResponse: true, requestId: 'dup' })),
    ).toMatchObject({
      status: 200,
    });
  });

  test('before the handshake it is -32600', async () => {
    await using client = await RawWsClient.connect(server.url);
    expect(await errorCode(client, {})).toBe(-32600);
  });
});
