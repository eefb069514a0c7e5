// The fault proxy itself, in front of a plain ws echo server: frames pass unchanged, pause holds
// them, delay keeps order, drop and cut end connections abruptly, refusal refuses.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { FaultProxy, WsFrameSplitter, waitFor } from '@execd/test-kit';
import { describe, expect, test } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';

async function echoServer(
  options: { readonly token?: string } = {},
): Promise<WebSocketServer & AsyncDisposable> {
  const wss = new WebSocketServer({
    host: '127.0.0.1',
    port: 0,
    verifyClient: (info, done) =>
      done(options.token === undefined || info.req.headers.authorization === `Bearer ${options.token}`, 401),
  });
  await once(wss, 'listening');
  wss.on('connection', (socket) => {
    socket.on('error', () => {});
    socket.on('message', (data, isBinary) => socket.send(data, { binary: isBinary }));
  });
  return Object.assign(wss, {
    [Symbol.asyncDispose]: async () => {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  });
}

function urlOf(wss: WebSocketServer): string {
  return `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`;
}

/** A ws client that records every message and how it closed. */
async function client(url: string, headers: Record<string, string> = {}) {
  const socket = new WebSocket(url, { headers });
  const messages: string[] = [];
  socket.on('message', (data) => messages.push(String(data)));
  socket.on('error', () => {});
  const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
  await once(socket, 'open');
  return { socket, messages, closed };
}

describe('FaultProxy', () => {
  test('forwards frames of any size both ways, unchanged', async () => {
    await using echo = await echoServer();
    await using proxy = await FaultProxy.start({ target: urlOf(echo) });
    const c = await client(proxy.url);
    const big = 'x'.repeat(200_000);
    for (const text of ['a', 'b'.repeat(200), big]) c.socket.send(text);
    await waitFor(() => c.messages.length === 3, { what: 'three echoes' });
    expect(c.messages).toEqual(['a', 'b'.repeat(200), big]);
    expect(proxy.stats).toMatchObject({ accepted: 1, open: 1, frames: { toServer: 3, toClient: 3 } });
    c.socket.close();
    expect(await c.closed).toBe(1005);
  });

  test('pause holds frames until resume; delay keeps their order', async () => {
    await using echo = await echoServer();
    await using proxy = await FaultProxy.start({ target: urlOf(echo) });
    const c = await client(proxy.url);
    proxy.pause('toClient');
    c.socket.send('held');
    await waitFor(() => proxy.stats.frames.toServer === 1, { what: 'the frame to reach the server' });
    expect(c.messages).toEqual([]);
    proxy.setDelay(20, 'toClient');
    proxy.resume('toClient');
    for (const text of ['1', '2', '3']) c.socket.send(text);
    await waitFor(() => c.messages.length === 4, { what: 'every echo' });
    expect(c.messages).toEqual(['held', '1', '2', '3']);
    c.socket.terminate();
  });

  test('drop and cut end connections without a close frame; refusal refuses', async () => {
    await using echo = await echoServer();
    await using proxy = await FaultProxy.start({ target: urlOf(echo) });
    const dropped = await client(proxy.url);
    proxy.drop();
    expect(await dropped.closed).toBe(1006);

    const cut = await client(proxy.url);
    const cutting = proxy.cutMidFrame('toClient');
    cut.socket.send('y'.repeat(10_000));
    await cutting;
    expect(await cut.closed).toBe(1006);
    expect(cut.messages).toEqual([]);

    proxy.refuseConnections();
    const refused = new WebSocket(proxy.url);
    refused.on('error', () => {});
    await new Promise((resolve) => refused.once('close', resolve));
    expect(proxy.stats.refused).toBe(1);
    proxy.acceptConnections();
    const again = await client(proxy.url);
    again.socket.terminate();
    await again.closed;
  });

  test('a refused upgrade passes through (HTTP 401)', async () => {
    await using echo = await echoServer({ token: 'secret' });
    await using proxy = await FaultProxy.start({ target: urlOf(echo) });
    const refused = new WebSocket(proxy.url);
    refused.on('error', () => {});
    const [, response] = (await once(refused, 'unexpected-response')) as [
      unknown,
      { statusCode: number; resume(): void },
    ];
    expect(response.statusCode).toBe(401);
    response.resume();
    refused.terminate();
    const allowed = await client(proxy.url, { Authorization: 'Bearer secret' });
    allowed.socket.send('ok');
    await waitFor(() => allowed.messages.length === 1, { what: 'the echo' });
    allowed.socket.terminate();
  });
});

describe('WsFrameSplitter', () => {
  test('splits frames across arbitrary byte boundaries (7, 16 and 64 bit lengths, masked)', () => {
    const frame = (payload: number, masked: boolean): Buffer => {
      const header =
        payload < 126
          ? Buffer.from([0x82, payload | (masked ? 0x80 : 0)])
          : payload < 65536
            ? Buffer.from([0x82, 126 | (masked ? 0x80 : 0), payload >> 8, payload & 0xff])
            : Buffer.concat([
                Buffer.from([0x82, 127 | (masked ? 0x80 : 0)]),
                Buffer.from([0, 0, 0, 0, 0, payload >> 16, (payload >> 8) & 0xff, payload & 0xff]),
              ]);
      return Buffer.concat([
        header,
        masked ? Buffer.from([1, 2, 3, 4]) : Buffer.alloc(0),
        Buffer.alloc(payload, 7),
      ]);
    };
    const frames = [frame(5, false), frame(300, true), frame(70_000, false), frame(0, true)];
    const stream = Buffer.concat(frames);
    const splitter = new WsFrameSplitter();
    const out: Buffer[] = [];
    for (let i = 0; i < stream.length; i += 997) out.push(...splitter.push(stream.subarray(i, i + 997)));
    expect(out.map((f) => f.length)).toEqual(frames.map((f) => f.length));
    expect(Buffer.concat(out).equals(stream)).toBe(true);
    expect(splitter.buffered).toBe(0);
  });
});
