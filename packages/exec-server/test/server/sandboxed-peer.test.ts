// Sandbox escape through the executor's own port (security review): with the network on, a
// sandboxed command shares the host's network namespace and can open 127.0.0.1:PORT. Without an
// auth token it would get a session there and start unsandboxed processes. These tests run the
// attack for real: a command started through the server itself, under bubblewrap, speaks HTTP to
// the server's port with bash's /dev/tcp; the same script run unsandboxed is the control.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { pathToFileUri } from '@execd/protocol';
import { captureLogger, ProcessTracker } from '@execd/test-kit';
import { describe, expect, test } from 'vitest';
import { startReverseExecServer } from '../../src/server/start-reverse-exec-server.ts';
import { RawWsClient } from '../helpers/raw-ws-client.ts';
import { startHost } from '../helpers/reverse-host.ts';
import { startTestServer } from '../helpers/test-server.ts';

const tracker = new ProcessTracker();

/**
 * Prints the status line the server answers to `GET /readyz` and to a WebSocket upgrade, each on
 * its own connection to 127.0.0.1:$1 (or `connect-failed`).
 */
const ATTACK = String.raw`
port=$1
ask() {
  exec 3<>"/dev/tcp/127.0.0.1/$port" || { echo "$1: connect-failed"; return; }
  printf "$2" "$port" >&3
  IFS= read -r status <&3
  echo "$1: $status" | tr -d '\r'
  exec 3<&-
}
UPGRADE='GET / HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n'
[ "$2" = burst ] && { for i in 1 2 3 4 5 6; do ask upgrade "$UPGRADE"; done; exit; }
ask readyz 'GET /readyz HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nConnection: close\r\n\r\n'
[ "$2" = health ] && { ask metrics 'GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nConnection: close\r\n\r\n'; exit; }
ask upgrade "$UPGRADE"
`;

async function run(
  client: RawWsClient,
  processId: string,
  port: string,
  sandbox: Record<string, unknown> | null,
  target: 'server' | 'health' | 'burst' = 'server',
): Promise<{ text: string; sandboxType: unknown }> {
  const started = await client.call<{ sandboxType: unknown }>('process/start', {
    processId,
    argv: ['bash', '-c', ATTACK, 'attack', port, target],
    cwd: pathToFileUri(process.cwd()),
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    tty: false,
    pipeStdin: false,
    arg0: null,
    ...(sandbox === null ? {} : { sandbox }),
  });
  const list = await client.call<{ processes: { pid?: number }[] }>('process/list', {});
  for (const entry of list.processes) if (entry.pid !== undefined) tracker.add(entry.pid);
  let afterSeq = 0;
  let text = '';
  for (;;) {
    const read = await client.call<{ chunks: { chunk: string }[]; nextSeq: number; closed: boolean }>(
      'process/read',
      { processId, afterSeq, maxBytes: null, waitMs: 2_000 },
    );
    for (const chunk of read.chunks) text += Buffer.from(chunk.chunk, 'base64').toString('utf8');
    afterSeq = read.nextSeq - 1;
    if (read.closed) return { text, sandboxType: started.sandboxType };
  }
}

/**
 * A host client process: WebSocket upgrades of 12 connections at once to 127.0.0.1:argv[1], each
 * status line printed, round after round until its stdin ends.
 */
const HOST_BURSTS = String.raw`
const net = require('node:net');
const port = Number(process.argv[1]);
const request = 'GET / HTTP/1.1\r\nHost: 127.0.0.1:' + port + '\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
  'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n';
let running = true;
process.stdin.on('end', () => { running = false; }).resume();
const upgrade = () => new Promise((resolve) => {
  const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
  let text = '';
  socket.setEncoding('latin1').on('data', (data) => {
    text += data;
    const end = text.indexOf('\r\n');
    if (end < 0) return;
    process.stdout.write(text.slice(0, end) + '\n');
    socket.destroy();
    resolve();
  });
  socket.on('error', () => { process.stdout.write('error\n'); resolve(); });
});
(async () => { do { await Promise.all(Array.from({ length: 12 }, upgrade)); } while (running); })();
`;

function connectionsTotal(metricsText: string): number {
  return Number(/^execd_connections_total (\d+)$/m.exec(metricsText)?.[1]);
}

describe.skipIf(process.platform !== 'linux')('a sandboxed command reaching its own server', () => {
  test.each([
    ['networkAccess: true', { profile: 'workspace-write', networkAccess: true }],
    ["network: 'full'", { profile: 'workspace-write', network: 'full' }],
  ])(
    'is refused (%s); the same script outside the sandbox and host clients are served',
    async (_, sandbox) => {
      const { logger, records } = captureLogger();
      await using server = await startTestServer({ logger }); // no auth token: the dangerous setup
      const port = new URL(server.url).port;
      await using client = await RawWsClient.connect(server.url);
      await client.initialize();

      // Control: unsandboxed, the script reaches the server (so the check below can fail).
      const control = await run(client, 'control', port, null);
      expect(control.text).toBe('readyz: HTTP/1.1 200 OK\nupgrade: HTTP/1.1 101 Switching Protocols\n');
      const before = connectionsTotal(await server.server.metrics.render());

      const attack = await run(client, 'attack', port, sandbox);
      expect(attack.sandboxType).toBe('linuxSeccomp');
      expect(attack.text).toBe('readyz: HTTP/1.1 403 Forbidden\nupgrade: HTTP/1.1 403 Forbidden\n');

      // Checked from outside: the server opened no connection for it, and says why it refused.
      expect(connectionsTotal(await server.server.metrics.render())).toBe(before);
      const refusals = records.filter((record) => record.fields?.attribution === 'sandboxed');
      expect(refusals).toHaveLength(2);
      expect(refusals.every((record) => typeof record.fields?.pid === 'number')).toBe(true);

      // A host client still connects and works.
      await using again = await RawWsClient.connect(server.url);
      await again.initialize();
      expect(await again.call('environment/status', {})).toEqual({ status: 'ready' });
    },
  );

  test('is refused while host clients connect at the same moment (attribution walks are shared)', async () => {
    const { logger, records } = captureLogger();
    await using server = await startTestServer({ logger });
    const port = new URL(server.url).port;
    await using client = await RawWsClient.connect(server.url);
    await client.initialize();
    // Another host process upgrades 12 connections at once, again and again, for as long as the
    // attack runs: the sandboxed connections are attributed in the same walks of /proc as theirs.
    const hosts = spawn(process.execPath, ['-e', HOST_BURSTS, port], { stdio: ['pipe', 'pipe', 'inherit'] });
    tracker.add(hosts.pid ?? 0);
    let statuses = '';
    hosts.stdout.setEncoding('utf8').on('data', (text: string) => {
      statuses += text;
    });
    const hostsDone = once(hosts, 'close');
    let attack: { text: string; sandboxType: unknown };
    try {
      attack = await run(
        client,
        'attack',
        port,
        { profile: 'workspace-write', networkAccess: true },
        'burst',
      );
    } finally {
      hosts.stdin.end();
      await hostsDone;
    }
    expect(attack.sandboxType).toBe('linuxSeccomp');
    expect(attack.text).toBe('upgrade: HTTP/1.1 403 Forbidden\n'.repeat(6));
    const hostLines = statuses.trim().split('\n');
    expect(hostLines.length).toBeGreaterThanOrEqual(12);
    expect(new Set(hostLines)).toEqual(new Set(['HTTP/1.1 101 Switching Protocols']));
    // Checked from outside: six refusals, each of a sandboxed pid (every host client got in).
    const refusals = records.filter((record) => record.message.startsWith('refused a connection'));
    expect(refusals.map((record) => record.fields?.attribution)).toEqual(Array(6).fill('sandboxed'));
    expect(refusals.every((record) => typeof record.fields?.pid === 'number')).toBe(true);
  });

  test('is refused when its connection cannot be attributed in time (a walk it could slow down)', async () => {
    // A sandboxed command can make the walk of /proc as slow as it likes (thousands of
    // descriptors in processes newer than the one that connects). A deadline that passes stands
    // for that here: the target server gives each attribution 0 ms.
    const { logger, records } = captureLogger();
    await using target = await startTestServer({ logger, peerAttributionTimeoutMs: 0 });
    const port = new URL(target.url).port;
    // The attacker runs under another server of this machine.
    await using server = await startTestServer();
    await using client = await RawWsClient.connect(server.url);
    await client.initialize();
    const attack = await run(client, 'attack', port, { profile: 'workspace-write', networkAccess: true });
    expect(attack.sandboxType).toBe('linuxSeccomp');
    expect(attack.text).toBe('readyz: HTTP/1.1 403 Forbidden\nupgrade: HTTP/1.1 403 Forbidden\n');
    // Checked from outside: refused as unattributed, whoever asked (a host client too).
    const refusals = records.filter((record) => record.message.startsWith('refused a connection'));
    expect(refusals.map((record) => record.fields?.attribution)).toEqual(['unattributed', 'unattributed']);
    const control = await run(client, 'control', port, null);
    expect(control.text).toBe('readyz: HTTP/1.1 403 Forbidden\nupgrade: HTTP/1.1 403 Forbidden\n');
  });

  test('is refused on the health port of a reverse-connecting server (--health-listen)', async () => {
    const { logger, records } = captureLogger();
    const host = await startHost();
    try {
      await using reverse = await startReverseExecServer({
        connect: host.url,
        healthListen: 'http://127.0.0.1:0',
        logger,
      }); // no auth token: /metrics is open to loopback peers
      await host.next();
      const port = new URL(reverse.healthUrl ?? '').port;
      // The attacker runs under another server of this machine: any sandboxed process will do.
      await using server = await startTestServer();
      await using client = await RawWsClient.connect(server.url);
      await client.initialize();

      const control = await run(client, 'control', port, null, 'health');
      expect(control.text).toBe('readyz: HTTP/1.1 200 OK\nmetrics: HTTP/1.1 200 OK\n');
      const attack = await run(
        client,
        'attack',
        port,
        { profile: 'workspace-write', networkAccess: true },
        'health',
      );
      expect(attack.sandboxType).toBe('linuxSeccomp');
      expect(attack.text).toBe('readyz: HTTP/1.1 403 Forbidden\nmetrics: HTTP/1.1 403 Forbidden\n');
      // Checked from outside: the health port's guard logged both refusals as sandboxed.
      expect(records.filter((record) => record.fields?.attribution === 'sandboxed')).toHaveLength(2);
    } finally {
      await host.close();
    }
  });
});
