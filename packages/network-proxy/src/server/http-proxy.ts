import http from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from '@execd/protocol';
import type { Gate } from '../internal/gate.ts';
import { denialResponse, errorResponse, type ProxyResponse, rawResponse } from './responses.ts';
import { connectUpstream, pinnedLookup, splice } from './upstream.ts';

/** Headers that describe one hop, not the message; never forwarded (RFC 9110 §7.6.1). */
const HOP_BY_HOP_HEADERS: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  // Node answers `Expect: 100-continue` itself before the request reaches the proxy handler.
  'expect',
]);

/** Drops hop-by-hop headers (and those named in `Connection`) from a raw header list. */
export function forwardableHeaders(raw: readonly string[], keep: ReadonlySet<string> = new Set()): string[] {
  const drop = new Set(HOP_BY_HOP_HEADERS);
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]?.toLowerCase();
    if (name === 'connection' || name === 'proxy-connection') {
      for (const token of (raw[i + 1] ?? '').split(',')) drop.add(token.trim().toLowerCase());
    }
  }
  for (const name of keep) drop.delete(name);
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] ?? '';
    if (!drop.has(name.toLowerCase())) out.push(name, raw[i + 1] ?? '');
  }
  return out;
}

/** Splits a CONNECT authority (`host:port`, `[v6]:port`); undefined when malformed. */
export function splitAuthority(authority: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(authority);
  if (!match) return undefined;
  const port = Number(match[3]);
  if (port < 1 || port > 65535) return undefined;
  return { host: match[1] ?? match[2] ?? '', port };
}

/** Options for `HttpProxy`. */
export interface HttpProxyOptions {
  readonly gate: Gate;
  readonly logger: Logger;
  readonly connectTimeoutMs: number;
  /** Called with every upstream socket so the owner can destroy it on close. */
  readonly track: (socket: Socket) => void;
}

/** The HTTP side of the proxy: absolute-URI forwarding, `CONNECT` tunnels and upgrades. */
export class HttpProxy {
  readonly #options: HttpProxyOptions;
  readonly #agent: http.Agent;

  constructor(options: HttpProxyOptions) {
    this.#options = options;
    // Keep upstream connections alive between forwarded requests (most of the proxy's overhead).
    this.#agent = new http.Agent({ keepAlive: true });
  }

  /** A new HTTP server wired to this proxy's handlers; the owner makes it listen (unix or TCP). */
  createServer(): http.Server {
    // requestTimeout 0: uploads through the proxy may be long; headersTimeout still bounds idle clients.
    const server = http.createServer({ requireHostHeader: false, requestTimeout: 0 });
    server.on('connection', (socket: Socket) => this.#options.track(socket));
    server.on('request', (req, res) => void this.#forward(req, res));
    server.on('connect', (req, socket, head) => void this.#tunnel(req, socket, head));
    server.on('upgrade', (req, socket, head) => void this.#upgrade(req, socket, head));
    server.on('clientError', (error, socket) => {
      this.#options.logger.debug('network proxy client error', { error });
      if (socket.writable) socket.end(rawResponse(errorResponse(400, 'malformed request')));
      else socket.destroy();
    });
    return server;
  }

  async #forward(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const target = parseAbsoluteHttpUrl(req.url ?? '');
    if (!target) {
      send(res, errorResponse(400, 'this is a proxy: send an absolute http:// URL, or CONNECT for https'));
      return;
    }
    const auth = await this.#options.gate.authorize('http', target.host, target.port);
    if (res.destroyed) return;
    if (!auth.ok) {
      send(res, auth.denial ? denialResponse(auth.denial) : errorResponse(502, auth.unresolved));
      return;
    }
    const headers = forwardableHeaders(req.rawHeaders);
    if (!headers.some((_, i) => i % 2 === 0 && headers[i]?.toLowerCase() === 'host'))
      headers.push('Host', target.authority);
    const upstream = http.request({
      host: auth.request.host,
      port: auth.request.port,
      method: req.method ?? 'GET',
      path: target.path,
      headers,
      setHost: false,
      agent: this.#agent,
      lookup: pinnedLookup(auth.addresses),
    });
    upstream.on('socket', (socket: Socket) => {
      this.#options.track(socket);
      // Bound only the connect of a new socket; reused keep-alive sockets need no timer.
      if (!socket.connecting) return;
      const timer = setTimeout(() => {
        upstream.destroy(Object.assign(new Error('upstream connect timed out'), { code: 'ETIMEDOUT' }));
      }, this.#options.connectTimeoutMs);
      socket.once('connect', () => clearTimeout(timer));
      socket.once('close', () => clearTimeout(timer));
    });
    upstream.on('response', (response) => {
      res.writeHead(
        response.statusCode ?? 502,
        response.statusMessage,
        forwardableHeaders(response.rawHeaders),
      );
      // `pipe`, not `pipeline`: pipeline allocates an AbortController per call, measurable per request.
      response.on('error', () => res.destroy());
      response.pipe(res);
    });
    upstream.on('error', (error) => {
      this.#options.logger.debug('network proxy upstream error', { host: target.host, error });
      if (!res.headersSent)
        send(res, errorResponse(502, `cannot reach ${target.authority}: ${error.message}`));
      else res.destroy();
    });
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    // `pipe`, not `pipeline`: an upstream failure must not destroy the client socket before the 502 is sent.
    req.on('error', () => upstream.destroy());
    req.pipe(upstream);
  }

  async #tunnel(req: http.IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const client = socket as Socket;
    client.on('error', () => client.destroy());
    const authority = splitAuthority(req.url ?? '');
    if (!authority) {
      client.end(rawResponse(errorResponse(400, 'CONNECT needs host:port')));
      return;
    }
    const upstream = await this.#openUpstream(client, 'https', authority, req.url ?? '');
    if (!upstream) return;
    // TLS stays end to end: the proxy only splices bytes after this line.
    client.write('HTTP/1.1 200 Connection Established\r\nproxy-agent: execd-network-proxy\r\n\r\n');
    if (head.length > 0) upstream.write(head);
    splice(client, upstream);
  }

  async #upgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const client = socket as Socket;
    client.on('error', () => client.destroy());
    const target = parseAbsoluteHttpUrl(req.url ?? '');
    if (!target) {
      client.end(rawResponse(errorResponse(400, 'this is a proxy: send an absolute http:// URL')));
      return;
    }
    const upstream = await this.#openUpstream(client, 'http', target, target.authority);
    if (!upstream) return;
    // Re-send the request head in origin form; the upgrade handshake itself passes through untouched.
    const headers = forwardableHeaders(req.rawHeaders, new Set(['connection', 'upgrade']));
    const lines = [`${req.method ?? 'GET'} ${target.path} HTTP/1.1`];
    for (let i = 0; i + 1 < headers.length; i += 2) lines.push(`${headers[i]}: ${headers[i + 1]}`);
    upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
    if (head.length > 0) upstream.write(head);
    splice(client, upstream);
  }

  /**
   * Authorizes and connects on behalf of a raw-socket client (CONNECT, upgrade). On a denial, an
   * unreachable target or a client that went away meanwhile it answers or cleans up itself and
   * returns undefined; otherwise the tracked upstream socket.
   */
  async #openUpstream(
    client: Socket,
    protocol: 'http' | 'https',
    target: { readonly host: string; readonly port: number },
    label: string,
  ): Promise<Socket | undefined> {
    const auth = await this.#options.gate.authorize(protocol, target.host, target.port);
    if (client.destroyed) return undefined;
    if (!auth.ok) {
      client.end(
        rawResponse(auth.denial ? denialResponse(auth.denial) : errorResponse(502, auth.unresolved)),
      );
      return undefined;
    }
    let upstream: Socket;
    try {
      upstream = await connectUpstream({
        ...auth.request,
        addresses: auth.addresses,
        timeoutMs: this.#options.connectTimeoutMs,
      });
    } catch (error) {
      client.end(rawResponse(errorResponse(502, `cannot reach ${label}: ${(error as Error).message}`)));
      return undefined;
    }
    this.#options.track(upstream);
    if (client.destroyed) {
      upstream.destroy();
      return undefined;
    }
    return upstream;
  }

  /** Stops reusing upstream connections. */
  close(): void {
    this.#agent.destroy();
  }
}

interface HttpTarget {
  readonly host: string;
  readonly port: number;
  /** `host:port` as in the URL (brackets kept). */
  readonly authority: string;
  /** Path and query in origin form. */
  readonly path: string;
}

function parseAbsoluteHttpUrl(raw: string): HttpTarget | undefined {
  if (!/^http:\/\//i.test(raw)) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  const port = url.port === '' ? 80 : Number(url.port);
  return { host: url.hostname, port, authority: url.host, path: `${url.pathname}${url.search}` };
}

function send(res: http.ServerResponse, response: ProxyResponse): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(response.status, { ...response.headers, 'content-length': Buffer.byteLength(response.body) });
  res.end(response.body);
}
