// The logging proxy (bin/ws-log-proxy.mjs) as a real child between a real client and a real
// WebSocket server: frames and close codes pass unchanged and are logged; a refused upgrade
// reaches the client with its status and body.
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { CliChild } from './cli-child.ts';
import { waitFor } from './wait-for.ts';

const PROXY = fileURLToPath(new URL('../bin/ws-log-proxy.mjs', import.meta.url));

/** An echo server that refuses upgrades without `Authorization: Bearer t`, with a body. */
async function startEchoServer(): Promise<{ url: string; paths: string[]; close(): Promise<void> }> {
  const paths: string[] = [];
  const http = createServer();
  const wss = new WebSocketServer({ noServer: true });
  http.on('upgrade', (request, socket, head) => {
    paths.push(request.url ?? '');
    if (request.headers.authorization !== 'Bearer t') {
      socket.end('HTTP/1.1 401 Unauthorized\r\nConnection: close\r\nContent-Length: 9\r\n\r\nno token\n');
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => {
      ws.on('message', (data, isBinary) => {
        if (data.toString() === 'bye') ws.close(4001, 'asked to');
        else ws.send(data, { binary: isBinary });
      });
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const address = http.address();
  return {
    url: `ws://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`,
    paths,
    close: async () => {
      for (const client of wss.clients) client.terminate();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

test('frames, close codes and refusals pass through the logging proxy, and every frame is logged', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ws-log-proxy-'));
  const echo = await startEchoServer();
  const out = join(dir, 'log.jsonl');
  await using proxy = new CliChild(PROXY, ['--target', echo.url, '--out', out]);
  try {
    const url = await proxy.firstLine({ what: 'the proxy URL' });

    const refused = new WebSocket(`${url}/x`);
    const [, response] = (await once(refused, 'unexpected-response')) as [
      unknown,
      import('node:http').IncomingMessage,
    ];
    response.setEncoding('utf8');
    let body = '';
    for await (const text of response) body += text;
    refused.on('error', () => {}); // terminate() on a refused socket reports the refusal again
    refused.terminate();
    expect(response.statusCode).toBe(401);
    expect(body).toBe('no token\n');

    const client = new WebSocket(`${url}/path?q=1`, { headers: { Authorization: 'Bearer t' } });
    await once(client, 'open');
    client.send(JSON.stringify({ id: 1, method: 'initialize' }));
    const [echoed] = (await once(client, 'message')) as [Buffer];
    expect(JSON.parse(echoed.toString())).toEqual({ id: 1, method: 'initialize' });
    client.send(Buffer.from([1, 2, 3]));
    await once(client, 'message');
    client.send('bye');
    const [code, reason] = (await once(client, 'close')) as [number, Buffer];
    expect({ code, reason: reason.toString() }).toEqual({ code: 4001, reason: 'asked to' });
    expect(echo.paths).toEqual(['/x', '/path?q=1']);

    const records = await waitFor(() => {
      const lines = readFileSync(out, 'utf8').trim().split('\n');
      const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
      return parsed.some((r) => r.event === 'close' && r.side === 'client') ? parsed : undefined;
    });
    const frames = records.filter((r) => r.dir !== undefined).map((r) => [r.dir, r.frame]);
    expect(frames).toEqual([
      ['c>s', { id: 1, method: 'initialize' }],
      ['s>c', { id: 1, method: 'initialize' }],
      ['c>s', { binaryBytes: 3 }],
      ['s>c', { binaryBytes: 3 }],
      ['c>s', { text: 'bye' }],
    ]);
    expect(records.find((r) => r.event === 'refused')).toMatchObject({ status: 401, body: 'no token\n' });
  } finally {
    await proxy.kill('SIGTERM');
    await echo.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
