// DNS rebinding (security review): a page whose name was re-pointed at 127.0.0.1 reaches the
// server as its own origin, without an Origin header on a GET, but with its own name as `Host`.
// Real HTTP requests and upgrades against a real server, with forged and with honest Host headers.
import { request } from 'node:http';
import { describe, expect, test } from 'vitest';
import { MISDIRECTED_REQUEST_STATUS } from '../../src/server/index.ts';
import { RawWsClient } from '../helpers/raw-ws-client.ts';
import { startTestServer } from '../helpers/test-server.ts';

/** `GET path` with exactly this Host header; resolves with the status. */
function get(url: string, path: string, host: string): Promise<number> {
  const target = new URL(url.replace(/^ws:/, 'http:'));
  return new Promise((resolve, reject) => {
    const req = request(
      { host: target.hostname, port: target.port, path, headers: { host }, agent: false },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

async function upgradeStatus(url: string, host: string): Promise<number | 'open'> {
  try {
    const client = await RawWsClient.connect(url, { headers: { host } });
    await client.close();
    return 'open';
  } catch (error) {
    return (error as { status?: number }).status ?? -1;
  }
}

describe('the Host header', () => {
  test('a rebound name is refused with 421 on /metrics, /readyz, any path and the upgrade', async () => {
    await using server = await startTestServer({ fake: true });
    const port = new URL(server.url).port;
    for (const host of [
      `rebind.attacker.example:${port}`,
      'rebind.attacker.example',
      `localhost.evil:${port}`,
    ]) {
      for (const path of ['/metrics', '/readyz', '/', '/other']) {
        expect({ host, path, status: await get(server.url, path, host) }).toEqual({
          host,
          path,
          status: MISDIRECTED_REQUEST_STATUS,
        });
      }
      expect(await upgradeStatus(server.url, host)).toBe(MISDIRECTED_REQUEST_STATUS);
    }
    // Nothing got through: no connection was ever opened.
    expect(await server.server.metrics.render()).toMatch(/^execd_connections_total 0$/m);
  });

  test('IP literals and localhost are served', async () => {
    await using server = await startTestServer({ fake: true });
    const port = new URL(server.url).port;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, 'LOCALHOST', `[::1]:${port}`]) {
      expect(await get(server.url, '/readyz', host)).toBe(200);
      expect(await get(server.url, '/metrics', host)).toBe(200);
      expect(await upgradeStatus(server.url, host)).toBe('open');
    }
  });

  test('allowedHosts adds names (exact, or a .domain and everything under it)', async () => {
    await using server = await startTestServer({
      fake: true,
      allowedHosts: ['execd.internal', '.agents.svc'],
    });
    expect(await get(server.url, '/readyz', 'execd.internal:7878')).toBe(200);
    expect(await get(server.url, '/readyz', 'execd-1.agents.svc:7878')).toBe(200);
    expect(await upgradeStatus(server.url, 'execd-1.agents.svc:7878')).toBe('open');
    expect(await get(server.url, '/readyz', 'other.internal')).toBe(MISDIRECTED_REQUEST_STATUS);
    expect(await upgradeStatus(server.url, 'other.internal')).toBe(MISDIRECTED_REQUEST_STATUS);
  });

  test('a bad allowedHosts entry is refused at start', async () => {
    await expect(startTestServer({ fake: true, allowedHosts: ['http://x/'] })).rejects.toMatchObject({
      code: 'invalidParams',
    });
  });
});
