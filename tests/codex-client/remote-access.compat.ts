// Reaching a remote execd-server from Codex CLI 0.169.0, which sends no token, the ways
// "Connecting Codex CLI" in deploy/README.md describes: directly a server with a token refuses it
// (401; Codex reports no usable environment); through a reverse proxy that adds `Authorization`
// it works; through an SSH tunnel (`ssh -L`, a real sshd on 127.0.0.1) to a server listening on
// loopback without a token it works (skipped without sshd, ssh, ssh-keygen, or when not root).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect, createServer as createTcpServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@execd/test-kit';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CliServer } from '../helpers/cli-server.ts';
import { runCodex } from './codex-run.ts';

const TOKEN = 'remote-access-token-5b1e';
const ECHO = { name: 'exec_command', arguments: { cmd: 'echo remote-ok', login: false } };

/**
 * A reverse proxy for WebSocket upgrades that adds `Authorization: Bearer <token>` (what nginx's
 * `proxy_set_header Authorization` does), then splices the two sockets.
 */
async function startAuthProxy(
  target: string,
  token: string,
): Promise<{ url: string; close(): Promise<void> }> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  const server: Server = createServer((_request, response) => {
    response.writeHead(426).end();
  });
  server.on('upgrade', (request: IncomingMessage, client: Socket, head: Buffer) => {
    const upstream = connect(Number(port), hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    const lines = [`${request.method} ${request.url} HTTP/1.1`];
    for (let i = 0; i < request.rawHeaders.length; i += 2) {
      if (request.rawHeaders[i]!.toLowerCase() === 'authorization') continue;
      lines.push(`${request.rawHeaders[i]}: ${request.rawHeaders[i + 1]}`);
    }
    lines.push(`Authorization: Bearer ${token}`);
    upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
    upstream.write(head);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const url = `ws://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return {
    url,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const scratch = mkdtempSync(join(tmpdir(), 'execd-remote-access-'));
let execd: CliServer | undefined;

beforeAll(async () => {
  const tokenFile = join(scratch, 'token');
  writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
  execd = await CliServer.start({ args: ['--auth-token-file', tokenFile, '--log-level', 'warn'] });
});

afterAll(async () => {
  await execd?.[Symbol.asyncDispose]();
  rmSync(scratch, { recursive: true, force: true });
});

function dumpDir(name: string): string {
  return mkdtempSync(join(scratch, `${name}-`));
}

describe('Codex CLI and an execd-server that demands a token', () => {
  test('directly, Codex is refused and execd logs a refusal without a token', async () => {
    const run = await runCodex('direct', [ECHO], {
      execServerUrl: execd!.url,
      sandbox: 'bypass',
      dump: dumpDir('direct'),
      files: {},
    });
    expect(run.records[0]?.output).toMatch(/^No usable execution environment is available/);
    expect(execd!.stderr).toContain('refused websocket upgrade without a valid bearer token');
    expect(execd!.stderr).toContain('"authorization":"missing"');
    expect(execd!.stderr).not.toContain(TOKEN);
  });

  test('through a proxy that adds the Authorization header, Codex runs commands', async () => {
    const proxy = await startAuthProxy(execd!.url, TOKEN);
    try {
      const run = await runCodex('proxied', [ECHO], {
        execServerUrl: proxy.url,
        sandbox: 'bypass',
        dump: dumpDir('proxied'),
        files: {},
      });
      expect(run.anomalies).toEqual([]);
      expect(run.records[0]?.output).toMatch(/Process exited with code 0[\s\S]*\nremote-ok\n$/);
    } finally {
      await proxy.close();
    }
  });
});

const SSHD = '/usr/sbin/sshd';
const CAN_SSH =
  existsSync(SSHD) &&
  existsSync('/usr/bin/ssh') &&
  existsSync('/usr/bin/ssh-keygen') &&
  process.getuid?.() === 0;

/** A port nobody listens on right now (bound, read and released). */
async function freePort(): Promise<number> {
  const server = createTcpServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function stop(child: ChildProcess | undefined): Promise<void> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

describe.skipIf(!CAN_SSH)('Codex CLI through an SSH tunnel (ssh -L) to a loopback execd-server', () => {
  const dir = join(scratch, 'ssh');
  let loopbackServer: CliServer | undefined;
  let sshd: ChildProcess | undefined;
  let tunnel: ChildProcess | undefined;
  let localPort = 0;

  beforeAll(async () => {
    mkdirSync(dir);
    // sshd as root wants its privilege-separation folder.
    mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
    for (const key of ['host_key', 'client_key']) {
      execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, key)]);
    }
    execFileSync('cp', [join(dir, 'client_key.pub'), join(dir, 'authorized_keys')]);
    // The "remote" server: loopback, no token (the tunnel is the authentication).
    loopbackServer = await CliServer.start({ args: ['--log-level', 'warn'] });
    const sshPort = await freePort();
    sshd = spawn(
      SSHD,
      [
        '-D',
        '-e',
        '-f',
        '/dev/null',
        ...['-o', `ListenAddress=127.0.0.1:${sshPort}`],
        ...['-o', `HostKey=${join(dir, 'host_key')}`],
        ...['-o', `AuthorizedKeysFile=${join(dir, 'authorized_keys')}`],
        ...['-o', 'PasswordAuthentication=no', '-o', 'KbdInteractiveAuthentication=no'],
        ...['-o', 'UsePAM=no', '-o', 'StrictModes=no', '-o', 'PidFile=none'],
        ...['-o', 'PermitRootLogin=prohibit-password', '-o', 'AllowTcpForwarding=local'],
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let sshdLog = '';
    sshd.stderr!.on('data', (data: Buffer) => {
      sshdLog += data.toString();
    });
    await waitFor(() => accepts(sshPort), { what: `sshd on ${sshPort} (${sshdLog})`, timeoutMs: 20_000 });
    localPort = await freePort();
    const execdPort = new URL(loopbackServer.url).port;
    tunnel = spawn(
      'ssh',
      [
        '-N',
        ...['-i', join(dir, 'client_key'), '-p', String(sshPort)],
        ...['-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null'],
        ...['-o', 'ExitOnForwardFailure=yes', '-o', 'LogLevel=ERROR'],
        ...['-L', `${localPort}:127.0.0.1:${execdPort}`],
        'root@127.0.0.1',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    await waitFor(() => accepts(localPort), { what: `the tunnel on ${localPort}`, timeoutMs: 20_000 });
  }, 60_000);

  afterAll(async () => {
    await stop(tunnel);
    await stop(sshd);
    await loopbackServer?.[Symbol.asyncDispose]();
  });

  test('Codex runs commands through the tunnel', async () => {
    const run = await runCodex('tunnel', [ECHO], {
      execServerUrl: `ws://127.0.0.1:${localPort}`,
      sandbox: 'bypass',
      dump: dumpDir('tunnel'),
      files: {},
    });
    expect(run.anomalies).toEqual([]);
    expect(run.records[0]?.output).toMatch(/Process exited with code 0[\s\S]*\nremote-ok\n$/);
  });
});
