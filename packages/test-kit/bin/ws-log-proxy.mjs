#!/usr/bin/env node
// A logging WebSocket proxy for exec-server traffic (a dev tool, not shipped).
//
//   node packages/test-kit/bin/ws-log-proxy.mjs --target ws://127.0.0.1:PORT [--listen 0] [--out FILE]
//
// Listens on 127.0.0.1 (port 0 by default) and prints `ws://127.0.0.1:PORT` as its first stdout
// line. Each client upgrade opens an upstream connection to the target first (same path and
// query, `Authorization` and `User-Agent` passed on); an upstream refusal (401, 403, ...) is
// answered to the client with the same status and body, so a client sees what it would see
// directly. Frames are forwarded both ways unchanged, close codes too, and each one is logged as
// a JSON line `{t, dir: "c>s"|"s>c", conn, frame}` to FILE (appended) or stderr: `frame` is the
// parsed JSON of a text frame, `{text}` when it is not JSON, `{binaryBytes: N}` for a binary
// frame. Connection events are logged as `{t, conn, event, ...}`. Point a client (e.g. Codex with
// CODEX_EXEC_SERVER_URL) at the printed URL to see every call and answer. SIGINT/SIGTERM end it.
import { createWriteStream } from 'node:fs';
import { createServer } from 'node:http';
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
const target = values.target.replace(/\/+$/, '');
const sink = values.out ? createWriteStream(values.out, { flags: 'a' }) : process.stderr;
const write = (record) => sink.write(`${JSON.stringify({ t: Date.now(), ...record })}\n`);
const log = (dir, conn, data, isBinary) => {
  let frame;
  if (isBinary) frame = { binaryBytes: data.length };
  else {
    const text = data.toString('utf8');
    try {
      frame = JSON.parse(text);
    } catch {
      frame = { text };
    }
  }
  write({ dir, conn, frame });
};

/** Close codes that may be sent in a close frame (1005, 1006 and 1015 are reserved for reports). */
const sendable = (code) =>
  (code >= 1000 && code <= 1014 && ![1004, 1005, 1006].includes(code)) || (code >= 3000 && code <= 4999);

const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 1024 * 1024 * 1024 });
const live = new Set();
let connections = 0;

function bridge(conn, client, upstream) {
  client.on('message', (data, isBinary) => {
    log('c>s', conn, data, isBinary);
    if (upstream.readyState === WebSocket.OPEN) upstream.send(data, { binary: isBinary });
  });
  upstream.on('message', (data, isBinary) => {
    log('s>c', conn, data, isBinary);
    if (client.readyState === WebSocket.OPEN) client.send(data, { binary: isBinary });
  });
  const forwardClose = (from, to, side) => (code, reason) => {
    write({ conn, event: 'close', side, code, reason: reason.toString() });
    if (to.readyState === WebSocket.OPEN) {
      if (sendable(code)) to.close(code, reason);
      else to.close();
    } else if (to.readyState !== WebSocket.CLOSED) to.terminate();
    live.delete(from);
  };
  client.on('close', forwardClose(client, upstream, 'client'));
  upstream.on('close', forwardClose(upstream, client, 'server'));
  for (const [socket, side] of [
    [client, 'client'],
    [upstream, 'server'],
  ]) {
    live.add(socket);
    socket.on('error', (error) => {
      write({ conn, event: 'error', side, error: String(error) });
      socket.terminate();
    });
  }
}

const server = createServer((_request, response) => response.writeHead(426).end());
server.on('upgrade', (request, socket, head) => {
  const conn = ++connections;
  const headers = {};
  for (const name of ['authorization', 'user-agent']) {
    if (request.headers[name]) headers[name] = request.headers[name];
  }
  socket.on('error', () => socket.destroy());
  write({
    conn,
    event: 'upgrade',
    url: request.url,
    authorization: headers.authorization ? 'present' : 'absent',
  });
  const upstream = new WebSocket(`${target}${request.url ?? '/'}`, {
    headers,
    perMessageDeflate: false,
    maxPayload: 1024 * 1024 * 1024,
  });
  // Exactly one of: the upgrade is bridged, the refusal is passed on, a 502 is answered.
  let answered = false;
  upstream.once('unexpected-response', (_req, response) => {
    answered = true;
    let body = '';
    response.setEncoding('utf8');
    response.on('data', (text) => {
      body += text;
    });
    response.on('end', () => {
      write({ conn, event: 'refused', status: response.statusCode, body });
      const extra = response.headers['www-authenticate']
        ? `WWW-Authenticate: ${response.headers['www-authenticate']}\r\n`
        : '';
      socket.end(
        `HTTP/1.1 ${response.statusCode} ${response.statusMessage}\r\nConnection: close\r\n${extra}` +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      upstream.terminate();
    });
  });
  upstream.on('error', (error) => {
    if (answered) return;
    answered = true;
    write({ conn, event: 'upstreamError', error: String(error) });
    socket.end('HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  });
  upstream.once('open', () => {
    answered = true;
    upstream.removeAllListeners('error');
    wss.handleUpgrade(request, socket, head, (client) => bridge(conn, client, upstream));
  });
});
server.listen(Number(values.listen), '127.0.0.1', () => {
  process.stdout.write(`ws://127.0.0.1:${server.address().port}\n`);
});

const stop = () => {
  for (const socket of live) socket.terminate();
  server.close();
  server.closeAllConnections();
  if (sink === process.stderr) process.exit(0);
  sink.end(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
