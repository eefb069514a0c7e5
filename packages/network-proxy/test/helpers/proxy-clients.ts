import http from 'node:http';
import net from 'node:net';
import tls from 'node:tls';

/** Opens a tunnel with `CONNECT host:port` through an HTTP proxy (TCP address or unix socket). */
export function connectTunnel(
  proxy: { readonly port: number } | { readonly path: string },
  host: string,
  port: number,
): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = 'path' in proxy ? net.connect(proxy.path) : net.connect(proxy.port, '127.0.0.1');
    let reply = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      reply = Buffer.concat([reply, chunk]);
      const end = reply.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      socket.off('error', reject);
      const head = reply.subarray(0, end).toString('latin1');
      if (!head.startsWith('HTTP/1.1 200')) {
        socket.destroy();
        reject(new Error(`CONNECT refused: ${head.split('\r\n')[0]}`));
        return;
      }
      socket.pause();
      const rest = reply.subarray(end + 4);
      if (rest.length > 0) socket.unshift(rest);
      resolve(socket);
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.write(`CONNECT ${host}:${port} HTTP/1.1\r\nHost: ${host}:${port}\r\n\r\n`);
  });
}

/** Sends raw bytes and collects everything until the peer closes. */
export function rawExchange(
  target: { readonly port: number } | { readonly path: string },
  bytes: Uint8Array | string,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = 'path' in target ? net.connect(target.path) : net.connect(target.port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.once('error', reject);
    socket.once('close', () => resolve(Buffer.concat(chunks)));
    socket.write(bytes);
  });
}

/** A GET through the proxy's unix socket with Node's `http.request` (absolute-form request target). */
export function httpGetViaProxy(socketPath: string, url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const req = http.request(
      { socketPath, path: url, headers: { host: target.host }, agent: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (text: string) => {
          body += text;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.once('error', reject);
    req.end();
  });
}

/** The undici `Agent` class bundled in Node (reachable through the global dispatcher symbol). */
type UndiciAgent = { close(): Promise<void> };
type ConnectOptions = { hostname: string; port: string; protocol: string; servername?: string };
type UndiciAgentClass = new (options: {
  connect: (
    options: ConnectOptions,
    callback: (error: Error | null, socket: net.Socket | null) => void,
  ) => void;
}) => UndiciAgent;

/**
 * An undici dispatcher for Node's global `fetch` that reaches every origin through `CONNECT` on
 * the proxy (what undici's ProxyAgent does). Node 20 ships undici without exporting it; after one
 * `fetch` the global dispatcher (an undici Agent) is registered under a well-known symbol.
 */
export async function fetchDispatcherViaProxy(proxyPort: number, ca?: string): Promise<UndiciAgent> {
  await fetch('http://127.0.0.1:1/').catch(() => {});
  const global = (globalThis as Record<symbol, unknown>)[Symbol.for('undici.globalDispatcher.1')] as object;
  const Agent = global.constructor as UndiciAgentClass;
  return new Agent({
    connect(options, callback) {
      connectTunnel({ port: proxyPort }, options.hostname, Number(options.port)).then(
        (socket) => {
          if (options.protocol !== 'https:') {
            callback(null, socket);
            return;
          }
          const secure = tls.connect({
            socket,
            servername: options.servername ?? options.hostname,
            ca,
            ALPNProtocols: ['http/1.1'],
          });
          secure.once('secureConnect', () => callback(null, secure));
          secure.once('error', (error) => callback(error, null));
        },
        (error: Error) => callback(error, null),
      );
    },
  });
}
