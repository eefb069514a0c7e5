// `--health-listen`: a server that dials its host (`--connect`) has no listening socket, so its
// readiness and metrics get an HTTP port of their own. /readyz follows the connection to the host.
import { type BuiltCli, CliChild, waitFor } from '@execd/test-kit';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseCliArgs } from '../../src/cli/args.ts';
import { parseHealthListen } from '../../src/server/health-listener.ts';
import { startReverseExecServer } from '../../src/server/start-reverse-exec-server.ts';
import { buildCli } from '../helpers/cli.ts';
import { startHost } from '../helpers/reverse-host.ts';

async function get(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  const response = await fetch(url, { headers });
  return { status: response.status, body: await response.text() };
}

describe('health endpoint of a reverse-connecting server', () => {
  test('/readyz is 503 until the host is reached, 200 while connected, 503 once it is lost', async () => {
    // Reserve a port for the host, then free it: the server first dials a closed port.
    const probe = await startHost();
    const hostUrl = probe.url;
    await probe.close();
    await using server = await startReverseExecServer({
      connect: hostUrl,
      healthListen: 'http://127.0.0.1:0',
      redialInitialDelayMs: 20,
      redialMaxDelayMs: 50,
    });
    expect(server.healthUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const readyz = `${server.healthUrl}/readyz`;
    const refused = await waitFor(
      async () => {
        const answer = await get(readyz);
        return answer.body.includes('last dial') ? answer : undefined;
      },
      { what: 'a failed dial in /readyz' },
    );
    expect(refused.status).toBe(503);
    expect(refused.body).toMatch(/^not ready: not connected to the host \(last dial: .*ECONNREFUSED/);

    const host = await startHost({ port: Number(new URL(hostUrl).port) });
    try {
      await host.next();
      expect(await get(readyz)).toEqual({ status: 200, body: 'ok\n' });
      const metrics = await get(`${server.healthUrl}/metrics`);
      expect(metrics.status).toBe(200);
      expect(metrics.body).toContain('execd_connections');
    } finally {
      await host.close();
    }
    await waitFor(async () => ((await get(readyz)).status === 503 ? true : undefined), {
      what: '/readyz to report the lost connection',
    });
    // Nothing else is served; the guard still refuses a browser's request.
    expect((await get(`${server.healthUrl}/`)).status).toBe(404);
    expect((await get(readyz, { origin: 'https://evil.example' })).status).toBe(403);
  });

  test('the readiness given is combined with the connection', async () => {
    const host = await startHost();
    let sandboxReady = false;
    try {
      await using server = await startReverseExecServer({
        connect: host.url,
        healthListen: 'http://127.0.0.1:0',
        readiness: () => (sandboxReady ? { ready: true } : { ready: false, reason: 'no sandbox' }),
      });
      await host.next();
      expect(await get(`${server.healthUrl}/readyz`)).toEqual({
        status: 503,
        body: 'not ready: no sandbox\n',
      });
      sandboxReady = true;
      expect((await get(`${server.healthUrl}/readyz`)).status).toBe(200);
    } finally {
      await host.close();
    }
  });

  test('/metrics needs the bearer token when there is one; a non-loopback address needs one', async () => {
    const host = await startHost();
    try {
      await using server = await startReverseExecServer({
        connect: host.url,
        healthListen: 'http://127.0.0.1:0',
        authToken: 'tok-health',
      });
      expect((await get(`${server.healthUrl}/metrics`)).status).toBe(401);
      expect((await get(`${server.healthUrl}/metrics`, { authorization: 'Bearer tok-health' })).status).toBe(
        200,
      );
      await expect(
        startReverseExecServer({ connect: host.url, healthListen: 'http://0.0.0.0:0' }),
      ).rejects.toThrow(/non-loopback address 0\.0\.0\.0 without an auth token/);
    } finally {
      await host.close();
    }
  });

  test('--health-listen parsing', () => {
    expect(parseHealthListen('http://127.0.0.1:9100')).toEqual({ host: '127.0.0.1', port: 9100 });
    expect(parseHealthListen('http://localhost:0')).toEqual({ host: '127.0.0.1', port: 0 });
    expect(parseHealthListen('http://[::1]:80/')).toEqual({ host: '::1', port: 80 });
    for (const bad of [
      '127.0.0.1:80',
      'http://example.com:80',
      'http://::1:80',
      'http://1.2.3.4:99999',
      'ws://127.0.0.1:1',
    ])
      expect(() => parseHealthListen(bad), bad).toThrow(/invalid --health-listen URL/);
    expect(() => parseCliArgs(['--health-listen', 'http://127.0.0.1:0'])).toThrow(
      '--health-listen needs --connect',
    );
    expect(parseCliArgs(['--connect', 'ws://h/x', '--health-listen', 'http://127.0.0.1:0'])).toMatchObject({
      healthListen: 'http://127.0.0.1:0',
    });
  });
});

describe('execd-server --connect --health-listen', () => {
  let cli: BuiltCli;
  beforeAll(async () => {
    cli = await buildCli();
  }, 60_000);
  afterAll(async () => {
    await cli?.remove();
  });

  test('logs the health URL and answers /readyz once connected', async () => {
    const host = await startHost();
    try {
      await using server = new CliChild(cli.script, [
        '--connect',
        host.url,
        '--health-listen',
        'http://127.0.0.1:0',
        '--log-level',
        'info',
      ]);
      const record = await waitFor(
        () => server.logRecords().find((entry) => entry.msg === 'health endpoints listening'),
        { what: 'the health URL in the log' },
      );
      await host.next();
      expect(await get(`${record.url as string}/readyz`)).toEqual({ status: 200, body: 'ok\n' });
      expect(server.stdout).toBe('');
    } finally {
      await host.close();
    }
  }, 60_000);
});
