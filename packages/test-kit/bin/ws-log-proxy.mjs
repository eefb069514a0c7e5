#!/usr/bin/env node
// A logging WebSocket proxy for exec-server traffic (a dev tool, not shipped).
//
//   node packages/test-kit/bin/ws-log-proxy.mjs --target ws://127.0.0.1:PORT [--listen 0] [--out FILE]
//
// Listens on 127.0.0.1 (port 0 by default), prints `ws://127.0.0.1:PORT` on its first stdout line,
// forwards every frame both ways unchanged, and logs each one as a JSON line
// `{t, dir: "c>s"|"s>c", conn, frame}` (frame parsed when it is JSON text, else
// `{binary: <bytes>}`) to FILE or stderr. Point a client (e.g. Codex with
// CODEX_EXEC_SERVER_URL) at the printed URL to see every call and answer.
import { createWriteStream } from 'node:fs';
import { parseArgs } from 'node:util';
import { WebSocket, WebSocketServer } from 'ws';

const { values } = parseArgs({
  options: {
    target: { type: 'string' },
    listen: { type: 'string', default: '0' },
    out: { type: 'string' },
  },
});
if (!values.target) {
  process.stderr.write('usage: ws-log-proxy.mjs --target ws://HOST:PORT [--listen PORT] [--out FILE]\n');
  process.exit(2);
}
const sink = values.out ? createWriteStream(values.out, { flags: 'a' }) : process.stderr;
let connections = 0;
const log = (dir, conn, data, isBinary) => {
  let frame;
  if (isBinary) frame = { binary: data.length };
  else {
    const text = data.toString('utf8');
    try {
      frame = JSON.parse(text);
    } catch {
      frame = { text };
    }
  }
  sink.write(`${JSON.stringify({ t: Date.now(), dir, conn, frame })}\n`);
};

const server = new WebSocketServer({ host: '127.0.0.1', port: Number(values.listen) });
server.on('connection', (client, request) => {
  const conn = ++connections;
  const headers = {};
  for (const name of ['authorization', 'user-agent']) {
    if (request.headers[name]) headers[name] = request.headers[name];
  }
  const upstream = new WebSocket(values.target, { headers });
  const pending = [];
  upstream.on('open', () => {
    for (const [data, isBinary] of pending.splice(0)) upstream.send(data, { binary: isBinary });
  });
  client.on('message', (data, isBinary) => {
    log('c>s', conn, data, isBinary);
    if (upstream.readyState === WebSocket.OPEN) upstream.send(data, { binary: isBinary });
    else pending.push([data, isBinary]);
  });
  upstream.on('message', (data, isBinary) => {
    log('s>c', conn, data, isBinary);
    if (client.readyState === WebSocket.OPEN) client.send(data, { binary: isBinary });
  });
  const closeBoth = () => {
    client.close();
    upstream.close();
  };
  client.on('close', closeBoth);
  upstream.on('close', closeBoth);
  client.on('error', closeBoth);
  upstream.on('error', (error) => {
    sink.write(`${JSON.stringify({ t: Date.now(), conn, upstreamError: String(error) })}\n`);
    closeBoth();
  });
});
server.on('listening', () => {
  process.stdout.write(`ws://127.0.0.1:${server.address().port}\n`);
});
const stop = () => server.close(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
