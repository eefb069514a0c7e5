// The reverse connection (`--connect`): the server dials a host (here a bare `ws` server acting as
// the JSON-RPC client), serves the protocol on that socket, redials when it drops so the host can
// resume the session, and stops dialling on close.
import { once } from 'node:events';
import { waitFor } from '@execd/test-kit';
import { describe, expect, test } from 'vitest';
import { type WebSocket, WebSocketServer } from 'ws';
import { parseCliArgs } from '../../src/cli/args.ts';
import {
  ENVIRONMENT_ID_HEADER,
  REDIAL_MAX_DELAY_MS,
  redialDelayMs,
} from '../../src/server/reverse-dialer.ts';
import { startReverseExecServer } from '../../src/server/start-reverse-exec-server.ts';
import { startHost } from '../helpers/reverse-host.ts';

/** Sends one JSON request on `socket` and returns its answer. */
async function call(
  socket: WebSocket,
  id: number,
  method: string,
  params: unknown,
): Promise<Record<string, unknown>> {
  const answer = new Promise<Record<string, unknown>>((resolve) => {
    const onMessage = (data: Buffer): void => {
      const message = JSON.parse(data.toString()) as Record<string, unknown>;
      if (message.id !== id) return;
      socket.off('message', onMessage);
      resolve(message);
    };
    socket.on('message', onMessage);
  });
  socket.send(JSON.stringify({ id, method, params }));
  return answer;
}

describe('reverse connection', () => {
  test('dials with the token and environment id, serves the protocol, redials after a drop and resumes', async () => {
    const host = await startHost();
    try {
      await using server = await startReverseExecServer({
        connect: host.url,
        connectToken: 'sesame',
        environmentId: 'builder-7',
        redialInitialDelayMs: 20,
        redialMaxDelayMs: 100,
      });
      const first = await host.next();
      expect(first.request.url).toBe('/executors');
      expect(first.request.headers.authorization).toBe('Bearer sesame');
      expect(first.request.headers[ENVIRONMENT_ID_HEADER]).toBe('builder-7');
      const init = await call(first.socket, 1, 'initialize', { clientName: 'host' });
      const sessionId = (init.result as { sessionId: string }).sessionId;
      expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);

      first.socket.terminate();
      const second = await host.next();
      const resumed = await call(second.socket, 1, 'initialize', {
        clientName: 'host',
        resumeSessionId: sessionId,
      });
      expect(resumed.result).toMatchObject({ sessionId });

      // Closing stops the dialling: the host sees a going-away close and no further socket.
      const closed = once(second.socket, 'close') as Promise<[number, Buffer]>;
      await server.close();
      const [code] = await closed;
      expect(code).toBe(1001);
      // close() returns once the dial loop ended: the two sockets are all there will ever be.
      expect(host.count()).toBe(2);
    } finally {
      await host.close();
    }
  });

  test('a refused dial (HTTP 401) is retried with backoff until closed', async () => {
    const wss = new WebSocketServer({
      host: '127.0.0.1',
      port: 0,
      verifyClient: (_info, done) => {
        attempts += 1;
        done(false, 401);
      },
    });
    let attempts = 0;
    await once(wss, 'listening');
    const { port } = wss.address() as { port: number };
    const server = await startReverseExecServer({
      connect: `ws://127.0.0.1:${port}/`,
      redialInitialDelayMs: 10,
      redialMaxDelayMs: 50,
    });
    await waitFor(() => attempts >= 3, { what: 'three dials' });
    await server.close();
    await new Promise<void>((resolve) => wss.close(() => resolve()));
    expect(attempts).toBeGreaterThanOrEqual(3);
  });

  test('redial pauses double from the initial one up to the cap, jittered by at most 20 %', () => {
    for (let attempt = 0; attempt < 12; attempt++) {
      const base = Math.min(REDIAL_MAX_DELAY_MS, 100 * 2 ** attempt);
      const delay = redialDelayMs(attempt, 100, REDIAL_MAX_DELAY_MS);
      expect(delay).toBeGreaterThanOrEqual(Math.floor(base * 0.8));
      expect(delay).toBeLessThanOrEqual(Math.ceil(base * 1.2));
    }
  });

  test('--connect excludes --listen; its companion flags need it; the URL must be ws(s)', async () => {
    expect(parseCliArgs(['--connect', 'wss://host/x', '--environment-id', 'e1'])).toMatchObject({
      connect: 'wss://host/x',
      environmentId: 'e1',
    });
    for (const argv of [
      ['--connect', 'ws://h/x', '--listen', 'ws://127.0.0.1:0'],
      ['--environment-id', 'e1'],
      ['--connect-token-file', '/tmp/t'],
    ]) {
      expect(() => parseCliArgs(argv)).toThrow(expect.objectContaining({ code: 'invalidParams' }));
    }
    await expect(startReverseExecServer({ connect: 'http://host/x' })).rejects.toMatchObject({
      code: 'invalidParams',
    });
  });
});
