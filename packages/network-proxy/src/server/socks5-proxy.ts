import net, { type Socket } from 'node:net';
import type { Logger } from '@execd/protocol';
import type { Gate } from '../internal/gate.ts';
import {
  isSocksError,
  parseSocksGreeting,
  parseSocksRequest,
  SOCKS_CMD_CONNECT,
  SOCKS_METHOD_NO_AUTH,
  SOCKS_METHOD_NONE,
  SOCKS_REPLY,
  type SocksRequest,
  socksReply,
} from './socks5-parser.ts';
import { connectUpstream, errorCode, splice } from './upstream.ts';

/** A greeting plus a request never exceed 2 + 255 + 4 + 1 + 255 + 2 bytes; more is not SOCKS5. */
const MAX_HANDSHAKE_BYTES = 600;

/** Options for `Socks5Proxy`. */
export interface Socks5ProxyOptions {
  readonly gate: Gate;
  readonly logger: Logger;
  readonly connectTimeoutMs: number;
  /** A client that has not finished its handshake after this long is dropped. */
  readonly handshakeTimeoutMs: number;
  /** Called with every socket (client and upstream) so the owner can destroy it on close. */
  readonly track: (socket: Socket) => void;
}

function replyForConnectError(error: unknown): number {
  switch (errorCode(error)) {
    case 'ECONNREFUSED':
      return SOCKS_REPLY.connectionRefused;
    case 'ENETUNREACH':
      return SOCKS_REPLY.networkUnreachable;
    case 'EHOSTUNREACH':
    case 'ETIMEDOUT':
    case 'ENOTFOUND':
      return SOCKS_REPLY.hostUnreachable;
    default:
      return SOCKS_REPLY.generalFailure;
  }
}

/** The SOCKS5 side of the proxy: no-auth, `CONNECT` only, domain names resolved by the proxy. */
export class Socks5Proxy {
  readonly #options: Socks5ProxyOptions;

  constructor(options: Socks5ProxyOptions) {
    this.#options = options;
  }

  /** A new server wired to this proxy; the owner makes it listen (unix or TCP). */
  createServer(): net.Server {
    return net.createServer({ allowHalfOpen: true }, (socket) => this.#handshake(socket));
  }

  #handshake(socket: Socket): void {
    this.#options.track(socket);
    socket.on('error', () => socket.destroy());
    socket.setTimeout(this.#options.handshakeTimeoutMs, () => socket.destroy());
    let buffered = Buffer.alloc(0);
    let greeted = false;
    const onData = (chunk: Buffer): void => {
      buffered = Buffer.concat([buffered, chunk]);
      if (buffered.length > MAX_HANDSHAKE_BYTES) {
        socket.destroy();
        return;
      }
      if (!greeted) {
        const greeting = parseSocksGreeting(buffered);
        if (greeting === 'incomplete') return;
        if (isSocksError(greeting)) {
          socket.destroy();
          return;
        }
        if (!greeting.methods.includes(SOCKS_METHOD_NO_AUTH)) {
          socket.end(Buffer.from([0x05, SOCKS_METHOD_NONE]));
          return;
        }
        socket.write(Buffer.from([0x05, SOCKS_METHOD_NO_AUTH]));
        greeted = true;
        buffered = buffered.subarray(greeting.length);
      }
      const request = parseSocksRequest(buffered);
      if (request === 'incomplete') return;
      if (isSocksError(request)) {
        socket.end(socksReply(request.reply));
        return;
      }
      socket.off('data', onData);
      socket.pause();
      void this.#connect(socket, request, buffered.subarray(request.length));
    };
    socket.on('data', onData);
  }

  async #connect(socket: Socket, request: SocksRequest, rest: Buffer): Promise<void> {
    if (request.command !== SOCKS_CMD_CONNECT) {
      socket.end(socksReply(SOCKS_REPLY.commandNotSupported));
      return;
    }
    const auth = await this.#options.gate.authorize('socks5', request.host, request.port);
    if (socket.destroyed) return;
    if (!auth.ok) {
      socket.end(socksReply(auth.denial ? SOCKS_REPLY.notAllowedByRuleset : SOCKS_REPLY.hostUnreachable));
      return;
    }
    let upstream: Socket;
    try {
      upstream = await connectUpstream({
        ...auth.request,
        addresses: auth.addresses,
        timeoutMs: this.#options.connectTimeoutMs,
      });
    } catch (error) {
      this.#options.logger.debug('network proxy socks5 connect failed', { host: request.host, error });
      socket.end(socksReply(replyForConnectError(error)));
      return;
    }
    this.#options.track(upstream);
    if (socket.destroyed) {
      upstream.destroy();
      return;
    }
    socket.setTimeout(0);
    socket.write(
      socksReply(SOCKS_REPLY.succeeded, {
        address: upstream.localAddress ?? '0.0.0.0',
        port: upstream.localPort ?? 0,
      }),
    );
    if (rest.length > 0) upstream.write(rest);
    splice(socket, upstream);
    socket.resume();
  }
}
