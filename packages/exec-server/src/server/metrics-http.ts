import type { IncomingMessage, ServerResponse } from 'node:http';
import { type BearerTokenVerifier, bearerChallenge, tokenRefusalHint } from './auth.ts';
import type { ExecServerMetrics } from './metrics.ts';

/**
 * Answers `GET /metrics` (and `HEAD`) with the server's metrics in the Prometheus text format.
 * When the server has an auth token, the scrape needs it too (`Authorization: Bearer`, 401
 * otherwise): the counts say what runs on the box, and one token rule is easier to reason about.
 * Other methods get 405. The caller's `RequestGuard` has already refused requests carrying an
 * `Origin` header, naming another host, or coming from a sandbox on this machine.
 */
export function serveMetrics(
  request: IncomingMessage,
  response: ServerResponse,
  metrics: ExecServerMetrics,
  verifier: BearerTokenVerifier | undefined,
): void {
  const end = (status: number, headers: Record<string, string> = {}, body?: string): void => {
    response.writeHead(status, {
      'content-type': 'text/plain; charset=utf-8',
      connection: 'close',
      ...headers,
    });
    response.end(body);
  };
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    end(405, { allow: 'GET, HEAD' });
    return;
  }
  if (verifier && !verifier.verify(request.headers.authorization)) {
    end(
      401,
      { 'www-authenticate': bearerChallenge(request.headers.authorization) },
      request.method === 'HEAD' ? undefined : tokenRefusalHint(request.headers.authorization),
    );
    return;
  }
  metrics.render().then(
    (text) => {
      response.writeHead(200, { 'content-type': metrics.contentType, connection: 'close' });
      response.end(request.method === 'HEAD' ? undefined : text);
    },
    () => end(500),
  );
}
