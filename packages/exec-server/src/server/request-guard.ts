import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '@execd/protocol';
import { isAllowedHost, MISDIRECTED_REQUEST_STATUS } from './host-check.ts';
import { checkLocalPeer, type LocalPeerCheck, type PeerVerdict } from './local-peer.ts';

/** A refused request: the status and reason phrase to answer with. */
export interface Refusal {
  readonly status: number;
  readonly reason: string;
}

/** Options of a {@link RequestGuard}. */
export interface RequestGuardOptions {
  /** Host names served besides IP literals and `localhost` (see `isAllowedHost`). */
  readonly allowedHosts: readonly string[];
  readonly localPeerCheck: LocalPeerCheck;
  readonly logger: Logger;
  /** Bound on attributing one connection (default `PEER_ATTRIBUTION_TIMEOUT_MS`). */
  readonly peerAttributionTimeoutMs?: number | undefined;
}

/**
 * The checks every HTTP request passes before it is routed, the WebSocket upgrade and the plain
 * routes (`/readyz`, `/metrics`, anything else) alike, in this order:
 *
 * 1. an `Origin` header: 403 (a web page, as the original);
 * 2. a `Host` that is not an IP literal, `localhost` or an allowed name: 421 (DNS rebinding);
 * 3. a peer on this machine held by a sandboxed process (or, for loopback, by no process that can
 *    be found): 403 (a sandboxed command reaching its own executor).
 *
 * The third is worked out once per connection, from the moment it is accepted ({@link watch}).
 */
export class RequestGuard {
  readonly #options: RequestGuardOptions;
  readonly #verdicts = new WeakMap<Socket, Promise<PeerVerdict>>();

  constructor(options: RequestGuardOptions) {
    this.#options = options;
  }

  /** Starts attributing a freshly accepted connection (the HTTP server's `connection` event). */
  watch(socket: Socket): void {
    this.#verdictOf(socket);
  }

  /** Why `request` must be refused, or undefined to route it. Never rejects. */
  async screen(request: IncomingMessage): Promise<Refusal | undefined> {
    const logger = this.#options.logger;
    if (request.headers.origin !== undefined) {
      logger.warn('refused a request carrying an Origin header', { origin: request.headers.origin });
      return { status: 403, reason: 'Forbidden' };
    }
    if (!isAllowedHost(request.headers.host, this.#options.allowedHosts)) {
      logger.warn('refused a request for a host name this server does not answer to', {
        host: request.headers.host,
        peer: request.socket.remoteAddress,
      });
      return { status: MISDIRECTED_REQUEST_STATUS, reason: 'Misdirected Request' };
    }
    const verdict = await this.#verdictOf(request.socket);
    if (!verdict.allowed) {
      logger.warn('refused a connection from inside a sandbox on this machine', {
        peer: `${request.socket.remoteAddress}:${request.socket.remotePort}`,
        attribution: verdict.peer,
        pid: verdict.pid,
      });
      return { status: 403, reason: 'Forbidden' };
    }
    return undefined;
  }

  #verdictOf(socket: Socket): Promise<PeerVerdict> {
    let verdict = this.#verdicts.get(socket);
    if (verdict === undefined) {
      verdict = checkLocalPeer(socket, {
        mode: this.#options.localPeerCheck,
        timeoutMs: this.#options.peerAttributionTimeoutMs,
      }).catch((): PeerVerdict => ({ allowed: false, peer: 'unattributed' }));
      this.#verdicts.set(socket, verdict);
    }
    return verdict;
  }
}
