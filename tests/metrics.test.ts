// GET /metrics on a live server: Prometheus text, per-server counts of sessions, processes by
// state, bytes streamed, reconnects/resumes, sandbox denials and request latency.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ExecServerClient } from '@execd/exec-client';
import { pathToFileUri } from '@execd/protocol';
import { FaultProxy, waitFor } from '@execd/test-kit';
import { afterEach, describe, expect, test } from 'vitest';
import { CliServer } from './helpers/cli-server.ts';
import { collect, execParams } from './helpers/exec.ts';
import { metricValue, TestServer } from './helpers/in-process-server.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function scrape(httpUrl: string, headers: Record<string, string> = {}): Promise<string> {
  const response = await fetch(`${httpUrl}/metrics`, { headers });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return response.text();
}

describe('GET /metrics', () => {
  test('counts sessions, processes by state, streamed bytes, resumes, denials and latency', async () => {
    const server = await TestServer.start({ detachedSessionTtlMs: 20_000 });
    cleanups.push(() => server.close());
    const proxy = await FaultProxy.start({ target: server.url });
    cleanups.push(() => proxy.close());
    const client = await ExecServerClient.connect({ url: proxy.url, codec: 'msgpack' });
    cleanups.push(() => client.close());

    const sleeper = await client.start(
      execParams({ processId: 'sleeper', argv: ['sleep', '60'], pipeStdin: true }),
    );
    let text = await scrape(server.httpUrl);
    expect(metricValue(text, 'execd_sessions', { state: 'attached' })).toBe(1);
    expect(metricValue(text, 'execd_processes', { state: 'running' })).toBe(1);
    expect(metricValue(text, 'execd_session_events_total', { event: 'created' })).toBe(1);
    expect(metricValue(text, 'execd_processes_started_total', { sandbox_type: 'none' })).toBe(1);

    // 64 KiB of output, pushed as notifications and read back once more with process/read.
    const writer = await client.start(
      execParams({ processId: 'writer', argv: ['head', '-c', '65536', '/dev/zero'] }),
    );
    const written = await collect(writer);
    expect(written.stdout.length).toBe(65_536);
    await writer.read({ afterSeq: 0 });
    text = await scrape(server.httpUrl);
    expect(metricValue(text, 'execd_streamed_bytes_total', { via: 'notification' })).toBeGreaterThanOrEqual(
      65_536,
    );
    expect(metricValue(text, 'execd_streamed_bytes_total', { via: 'read' })).toBe(65_536);
    expect(metricValue(text, 'execd_processes', { state: 'closed' })).toBe(1);
    expect(metricValue(text, 'execd_request_duration_seconds_count', { method: 'process/start' })).toBe(2);
    expect(
      metricValue(text, 'execd_request_duration_seconds_bucket', { method: 'process/start', le: '+Inf' }),
    ).toBe(2);

    // A lost connection: the session detaches, the client reconnects and resumes it.
    proxy.drop();
    await waitFor(
      async () =>
        metricValue(await scrape(server.httpUrl), 'execd_session_events_total', { event: 'resumed' }) === 1,
      { timeoutMs: 30_000, what: 'the session to be resumed' },
    );
    text = await scrape(server.httpUrl);
    expect(metricValue(text, 'execd_session_events_total', { event: 'detached' })).toBe(1);
    expect(metricValue(text, 'execd_sessions', { state: 'attached' })).toBe(1);
    expect(metricValue(text, 'execd_connections_total')).toBe(2);
    expect(metricValue(text, 'execd_connections')).toBe(1);
    expect((await sleeper.write(new TextEncoder().encode('x\n'))).status).toBe('accepted');

    // A sandbox denial.
    const ws = mkdtempSync('/tmp/execd-metrics-');
    cleanups.push(async () => rmSync(ws, { recursive: true, force: true }));
    const denied = await client.start(
      execParams({
        processId: 'denied',
        argv: ['sh', '-c', 'touch /etc/execd-metrics-denied'],
        cwd: ws,
        sandbox: { profile: 'workspace-write', network: 'off', workspaceRoots: [pathToFileUri(ws)] },
      }),
    );
    expect((await collect(denied)).sandboxDenied).toBe(true);
    await sleeper.terminate();
    text = await scrape(server.httpUrl);
    expect(metricValue(text, 'execd_sandbox_denials_total')).toBe(1);
    expect(metricValue(text, 'execd_processes_started_total', { sandbox_type: 'linuxSeccomp' })).toBe(1);
    expect(metricValue(text, 'execd_request_duration_seconds_count', { method: 'process/write' })).toBe(1);
    expect(metricValue(text, 'execd_request_duration_seconds_count', { method: 'process/terminate' })).toBe(
      1,
    );

    // Errors are counted by method and JSON-RPC code.
    await expect(client.start(execParams({ processId: 'bad', argv: [] }))).rejects.toMatchObject({
      code: 'invalidParams',
    });
    text = await scrape(server.httpUrl);
    expect(metricValue(text, 'execd_request_errors_total', { method: 'process/start', code: '-32602' })).toBe(
      1,
    );
  });

  test('the CLI serves /metrics; with a token the scrape needs it; browsers are refused', async () => {
    const dir = mkdtempSync('/tmp/execd-metrics-token-');
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, 's3cret\n');
    const server = await CliServer.start({ args: ['--auth-token-file', tokenFile] });
    cleanups.push(() => server.kill('SIGKILL'));

    expect((await fetch(`${server.httpUrl}/metrics`)).status).toBe(401);
    expect(
      (await fetch(`${server.httpUrl}/metrics`, { headers: { authorization: 'Bearer wrong' } })).status,
    ).toBe(401);
    const origin = await fetch(`${server.httpUrl}/metrics`, {
      headers: { authorization: 'Bearer s3cret', origin: 'https://evil.example' },
    });
    expect(origin.status).toBe(403);
    const post = await fetch(`${server.httpUrl}/metrics`, {
      method: 'POST',
      headers: { authorization: 'Bearer s3cret' },
    });
    expect(post.status).toBe(405);
    const text = await scrape(server.httpUrl, { authorization: 'Bearer s3cret' });
    expect(metricValue(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(text).toContain('# TYPE execd_request_duration_seconds histogram');
    expect((await fetch(`${server.httpUrl}/readyz`)).status).toBe(200);
  });

  test('two servers in one process keep separate counts', async () => {
    const a = await TestServer.start();
    cleanups.push(() => a.close());
    const b = await TestServer.start();
    cleanups.push(() => b.close());
    await a.client();
    expect(metricValue(await scrape(a.httpUrl), 'execd_connections_total')).toBe(1);
    expect(metricValue(await scrape(b.httpUrl), 'execd_connections_total')).toBe(0);
  });
});
