import { createServer, type Server } from 'node:http';
import { isIPv6 } from 'node:net';
import { ExecError, type Logger, NOOP_LOGGER } from '@execd/protocol';
import type { BearerTokenVerifier } from './auth.ts';
import { answerPlainHttp, type Readiness } from './http-endpoints.ts';
import { parseSocketAddress, requireTokenOffLoopback } from './listen-url.ts';
import type { LocalPeerCheck } from './local-peer.ts';
import type { ExecServerMetrics } from './metrics.ts';
import { RequestGuard } from './request-guard.ts';

/** An `http://IP:PORT` address to serve `/readyz` and `/metrics` on (IPv6 in brackets). */
export interface HealthAddress {
  readonly host: string;
  readonly port: number;
}

/**
 * Parses `http://IP:PORT` (an IP literal, IPv6 in brackets, or `localhost` for 127.0.0.1; port 0
 * lets the kernel choose; a trailing `/` is allowed). Throws `ExecError` (`invalidParams`).
 */
export function parseHealthListen(value: string): HealthAddress {
  const rest = /^http:\/\/(.*?)\/?$/i.exec(value)?.[1];
  const address =
    rest === undefined ? undefined : parseSocketAddress(rest.replace(/^localhost:/i, '127.0.0.1:'));
  if (address === undefined)
    throw new ExecError(
      'invalidParams',
      `invalid --health-listen URL \`${value}\`; expected \`http://IP:PORT\``,
    );
  return address;
}

/** Options of {@link listenHealth}. */
export interface HealthListenerOptions extends HealthAddress {
  /** Required for a non-loopback address; `/metrics` then needs `Authorization: Bearer`. */
  readonly verifier: BearerTokenVerifier | undefined;
  readonly metrics: ExecServerMetrics;
  readonly readiness: () => Readiness;
  readonly allowedHosts: readonly string[];
  readonly localPeerCheck: LocalPeerCheck;
  readonly logger?: Logger;
}

/** A listening health endpoint. */
export interface HealthListener {
  /** `http://IP:PORT` with the bound port. */
  readonly url: string;
  /** Stops listening and closes open requests. Idempotent. */
  close(): Promise<void>;
}

/**
 * Serves `GET /readyz` and `GET /metrics` on an HTTP port of their own, for a server that has no
 * listening socket (`--connect`): the same answers and the same request guard as a listening
 * server's port, and 404 for everything else.
 */
export async function listenHealth(options: HealthListenerOptions): Promise<HealthListener> {
  requireTokenOffLoopback(options.host, options.verifier !== undefined, 'serve /metrics');
  const logger = options.logger ?? NOOP_LOGGER;
  const guard = new RequestGuard({
    allowedHosts: options.allowedHosts,
    localPeerCheck: options.localPeerCheck,
    logger,
  });
  const server: Server = createServer((request, response) =>
    answerPlainHttp(request, response, {
      guard,
      metrics: options.metrics,
      verifier: options.verifier,
      readiness: options.readiness,
      upgradeAtRoot: false,
    }),
  );
  server.on('upgrade', (_request, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  const url = isIPv6(options.host) ? `http://[${options.host}]:${port}` : `http://${options.host}:${port}`;
  logger.info('health endpoints listening', { url });
  let closing: Promise<void> | undefined;
  return {
    url,
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
