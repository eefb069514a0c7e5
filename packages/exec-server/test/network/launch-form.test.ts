// The managed network in the form Codex 0.169.0 sends it (captured from a session with a network
// permission profile): `enforceManagedNetwork: true`, `managedNetwork: null`, and
// `networkProxy: {proxy: {domains: {...}, allowLocalBinding, mode, ...}, auditMetadata,
// environmentId, executionId}`, through a real server, real bubblewrap and a real proxy.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileUri } from '@execd/protocol';
import { ProcessTracker } from '@execd/test-kit';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { RawWsClient } from '../helpers/raw-ws-client.ts';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';
import { type Origin, startOrigin, TEST_RESOLVER } from './helpers.ts';

const tracker = new ProcessTracker();
let origin: Origin;
let server: TestServer;
let workspace: string;
let savedTmpdir: string | undefined;

beforeAll(async () => {
  savedTmpdir = process.env.TMPDIR;
  process.env.TMPDIR = realpathSync(mkdtempSync(join(tmpdir(), 'execd-launch-form-')));
  workspace = realpathSync(mkdtempSync(join(process.env.TMPDIR, 'ws-')));
  origin = await startOrigin();
  server = await startTestServer({ processTable: { networkResolver: TEST_RESOLVER } });
});

afterAll(async () => {
  await server?.close();
  await origin?.close();
  const dir = process.env.TMPDIR;
  if (savedTmpdir === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmpdir;
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** `process/start` params as Codex 0.169.0 sends them (only ids, paths and domains changed). */
function codexParams(
  processId: string,
  script: string,
  proxy: Record<string, unknown>,
): Record<string, unknown> {
  return {
    processId,
    argv: ['/bin/bash', '-c', script],
    cwd: pathToFileUri(workspace),
    env: { PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8' },
    tty: false,
    pipeStdin: false,
    arg0: null,
    sandbox: {
      permissions: {
        type: 'managed',
        file_system: {
          type: 'restricted',
          entries: [
            { path: { type: 'special', value: { kind: 'root' } }, access: 'read' },
            { path: { type: 'special', value: { kind: 'project_roots' } }, access: 'write' },
          ],
        },
        network: 'enabled',
      },
      cwd: pathToFileUri(workspace),
      workspaceRoots: [pathToFileUri(workspace)],
      windowsSandboxLevel: 'disabled',
      windowsSandboxProxySettingsMode: 'reconcile',
      useLegacyLandlock: false,
    },
    enforceManagedNetwork: true,
    managedNetwork: null,
    networkProxy: {
      proxy: {
        enabled: true,
        enableSocks5: true,
        enableSocks5Udp: true,
        allowUpstreamProxy: true,
        dangerouslyAllowAllUnixSockets: false,
        mode: 'full',
        domains: { 'allowed.test': 'allow', 'denied.test': 'deny' },
        unixSockets: null,
        // The test names resolve to 127.0.0.1: a local destination.
        allowLocalBinding: true,
        ...proxy,
      },
      auditMetadata: { conversationId: 'c', appVersion: '0.169.0', originator: 'codex_exec', model: 'm' },
      environmentId: 'remote',
      executionId: 'e',
    },
  };
}

async function readAll(client: RawWsClient, processId: string): Promise<{ text: string; exitCode: unknown }> {
  let afterSeq = 0;
  let text = '';
  for (;;) {
    const read = await client.call<{
      chunks: { chunk: string }[];
      nextSeq: number;
      closed: boolean;
      exitCode: number | null;
    }>('process/read', { processId, afterSeq, waitMs: 2_000 });
    for (const chunk of read.chunks) text += Buffer.from(chunk.chunk, 'base64').toString();
    afterSeq = read.nextSeq - 1;
    if (read.closed) return { text, exitCode: read.exitCode };
  }
}

describe('the original launch form of the managed network', () => {
  test('allowed domains go through the proxy, denied and unlisted ones get the 403', async () => {
    await using client = await RawWsClient.connect(server.url);
    await client.initialize();
    const port = origin.port;
    const script = [
      `curl -sS --max-time 20 http://allowed.test:${port}/in; echo; echo allowed=$?`,
      `curl -sS --max-time 20 -o /dev/null -w '%{http_code}' http://denied.test:${port}/no; echo; echo denied=$?`,
      `curl -sS --max-time 20 -o /dev/null -w '%{http_code}' http://unknown.test:${port}/no; echo`,
    ].join('\n');
    const started = await client.call('process/start', codexParams('p1', script, {}));
    expect(started).toEqual({ processId: 'p1', sandboxType: 'linuxSeccomp' });
    const list = await client.call<{ processes: { pid?: number }[] }>('process/list', {});
    for (const entry of list.processes) if (entry.pid !== undefined) tracker.add(entry.pid);
    const { text, exitCode } = await readAll(client, 'p1');
    expect(text).toContain(`hello allowed.test:${port}/in`);
    expect(text.match(/^403$/gm)).toHaveLength(2);
    expect(exitCode).toBe(0);
    const decisions = client
      .notifications('network/policyDecision')
      .map((n) => n.params as { request: { host: string }; decision: string });
    expect(decisions.map((d) => [d.request.host, d.decision])).toEqual([
      ['allowed.test', 'allow'],
      ['denied.test', 'deny'],
      ['unknown.test', 'deny'],
    ]);
  });

  test('a `limited` mode or an unknown permission is refused with -32602', async () => {
    await using client = await RawWsClient.connect(server.url);
    await client.initialize();
    for (const [id, proxy] of [
      ['m', { mode: 'limited' }],
      ['d', { domains: { 'x.test': 'maybe' } }],
    ] as const) {
      const error = await client.errorOf(client.request('process/start', codexParams(id, 'true', proxy)));
      expect(error.code).toBe(-32602);
    }
  });
});
