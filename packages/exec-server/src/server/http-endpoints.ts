import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BearerTokenVerifier } from './auth.ts';
import type { ExecServerMetrics } from './metrics.ts';
import { serveMetrics } from './metrics-http.ts';
import type { RequestGuard } from './request-guard.ts';

/** Whether the server can do its work: `GET /readyz` answers 200, or 503 with the reason. */
export type Readiness = { readonly ready: true } | { readonly ready: false; readonly reason: string };

/** The body of a plain HTTP request to `/`: what the endpoint is and how to reach it. */
export const UPGRADE_REQUIRED_HINT: string =
  'execd-server: this is a WebSocket endpoint (JSON-RPC over WebSocket); connect with a WebSocket ' +
  'client, e.g. `uexec --remote ws://HOST:PORT run "echo hi"` or Codex CLI, not a browser or curl. ' +
  'Plain HTTP serves only GET /readyz and GET /metrics\n';

/** The path of a request's target (empty when it cannot be parsed). */
export function pathOf(request: IncomingMessage): string {
  try {
    return new URL(request.url ?? '/', 'http://localhost').pathname;
  } catch {
    return '';
  }
}

/** What {@link answerPlainHttp} serves. */
export interface PlainHttpOptions {
  readonly guard: RequestGuard;
  readonly metrics?: ExecServerMetrics | undefined;
  readonly verifier?: BearerTokenVerifier | undefined;
  readonly readiness?: (() => Readiness) | undefined;
  /** `/` is the WebSocket endpoint (426 with a hint to plain HTTP) rather than nothing (404). */
  readonly upgradeAtRoot: boolean;
}

/**
 * Answers a plain HTTP request: the {@link RequestGuard} first (`Origin` 403, `Host` 421,
 * sandboxed local peer 403), then `GET /metrics` (bearer token when the server has one),
 * `GET /readyz` (200 `ok`, or 503 `not ready: REASON`), and 426 or 404 for anything else.
 */
export function answerPlainHttp(
  request: IncomingMessage,
  response: ServerResponse,
  options: PlainHttpOptions,
): void {
  void options.guard.screen(request).then((refused) => {
    if (request.socket.destroyed) return;
    const path = pathOf(request);
    if (refused === undefined && options.metrics && path === '/metrics') {
      serveMetrics(request, response, options.metrics, options.verifier);
      return;
    }
    const readyz = request.method === 'GET' && path === '/readyz';
    const readiness = readyz ? (options.readiness?.() ?? { ready: true }) : undefined;
    if (refused === undefined && readiness?.ready === false) {
      response.writeHead(503, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
      response.end(`not ready: ${readiness.reason}\n`);
      return;
    }
    const root = path === '/' && options.upgradeAtRoot;
    const status = refused?.status ?? (readyz ? 200 : root ? 426 : 404);
    response.writeHead(status, {
      'content-type': 'text/plain; charset=utf-8',
      connection: 'close',
      // RFC 9110: a 426 names the protocol to switch to.
      ...(status === 426 ? { upgrade: 'websocket' } : {}),
    });
    response.end(status === 200 ? 'ok\n' : status === 426 ? UPGRADE_REQUIRED_HINT : '');
  });
}
