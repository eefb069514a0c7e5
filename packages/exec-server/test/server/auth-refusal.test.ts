// What a client without a valid token gets back: 401 with a one-line body saying what to do and
// an RFC 6750 challenge, on the upgrade and on /metrics; the token never reaches the logs.
import { request } from 'node:http';
import { captureLogger } from '@execd/test-kit';
import { describe, expect, test } from 'vitest';
import { MISSING_TOKEN_HINT, WRONG_TOKEN_HINT } from '../../src/server/auth.ts';
import { UPGRADE_REQUIRED_HINT } from '../../src/server/http-endpoints.ts';
import { startTestServer } from '../helpers/test-server.ts';

interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** Sends a WebSocket upgrade (or a plain GET) and returns the HTTP answer it got. */
function get(
  url: string,
  path: string,
  headers: Record<string, string>,
  upgrade: boolean,
): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({
      host: hostname,
      port,
      path,
      headers: upgrade
        ? {
            Connection: 'Upgrade',
            Upgrade: 'websocket',
            'Sec-WebSocket-Version': '13',
            'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
            ...headers,
          }
        : headers,
    });
    req.on('upgrade', (_response, socket) => {
      socket.destroy();
      reject(new Error('the upgrade was accepted'));
    });
    req.on('response', (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (text: string) => {
        body += text;
      });
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body }),
      );
      response.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('a refused token', () => {
  test('the upgrade answers 401 with a one-line hint and a Bearer challenge', async () => {
    const { logger, records } = captureLogger();
    await using server = await startTestServer({ fake: true, authToken: 's3cret-token', logger });
    const missing = await get(server.url, '/', {}, true);
    expect(missing.status).toBe(401);
    expect(missing.body).toBe(MISSING_TOKEN_HINT);
    expect(missing.body.trimEnd().split('\n')).toHaveLength(1);
    expect(missing.headers['www-authenticate']).toBe('Bearer realm="execd-server"');
    const wrong = await get(server.url, '/', { Authorization: 'Bearer nope' }, true);
    expect(wrong.status).toBe(401);
    expect(wrong.headers['www-authenticate']).toBe('Bearer realm="execd-server", error="invalid_token"');
    // The body tells a wrong token from a missing one.
    expect(wrong.body).toBe(WRONG_TOKEN_HINT);
    expect(wrong.body).toMatch(/^execd-server: the bearer token sent .* is not the one/);
    const refusals = records.filter(
      (r) => r.message === 'refused websocket upgrade without a valid bearer token',
    );
    expect(refusals.map((r) => r.fields?.authorization)).toEqual(['missing', 'invalid']);
    expect(JSON.stringify(records)).not.toContain('s3cret-token');
    expect(JSON.stringify(records)).not.toContain('nope');
  });

  test('/metrics answers the same 401 bodies', async () => {
    await using server = await startTestServer({ fake: true, authToken: 's3cret-token' });
    const answer = await get(server.url, '/metrics', {}, false);
    expect(answer.status).toBe(401);
    expect(answer.body).toBe(MISSING_TOKEN_HINT);
    const wrong = await get(server.url, '/metrics', { Authorization: 'Bearer nope' }, false);
    expect(wrong).toMatchObject({ status: 401, body: WRONG_TOKEN_HINT });
  });

  test('a plain GET / (no upgrade) answers 426, naming WebSocket and what plain HTTP serves', async () => {
    await using server = await startTestServer({ fake: true });
    const answer = await get(server.url, '/', {}, false);
    expect(answer.status).toBe(426);
    expect(answer.headers.upgrade).toBe('websocket');
    expect(answer.body).toBe(UPGRADE_REQUIRED_HINT);
    expect(answer.body).toContain('WebSocket endpoint');
    expect(answer.body).toContain('/readyz');
  });

  test('the hint names what to send and where the guide is', () => {
    expect(MISSING_TOKEN_HINT).toMatch(/^execd-server: a bearer token is required/);
    expect(MISSING_TOKEN_HINT).toContain('Authorization: Bearer <token>');
    expect(MISSING_TOKEN_HINT).toContain('deploy/README.md');
  });
});
