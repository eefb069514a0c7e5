import { mkdtemp, readdir, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { createStaticResolver, startNetworkProxy } from '../src/index.ts';
import { bridgeEndpointOf } from '../src/internal/bridge-endpoint.ts';
import { runBehindBridge } from './helpers/bridge-run.ts';
import { bwrapArgv, type Origin, run, startOrigin } from './helpers/index.ts';

let origin: Origin;

beforeEach(async () => {
  origin = await startOrigin();
});

afterEach(async () => {
  await origin.close();
});

/** A host daemon's unix socket: counts connections and every byte it receives. */
async function startDecoy(path: string, banner: string | undefined) {
  let connections = 0;
  let bytes = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    if (banner !== undefined) socket.write(banner);
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return {
    connections: () => connections,
    bytes: () => bytes,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Replaces `path` by a symlink to `target` from another process (atomic rename, like an attacker). */
async function swapForSymlink(path: string, target: string): Promise<void> {
  const result = await run('sh', ['-c', 'ln -s "$1" "$2.new" && mv -fT "$2.new" "$2"', 'sh', target, path]);
  if (result.code !== 0) throw new Error(`swap failed: ${result.stderr}`);
}

test('a proxy socket swapped for a symlink to a host daemon: the daemon gets no byte, the command no connection', async () => {
  const decoyDir = await mkdtemp(join(tmpdir(), 'execd-decoy-'));
  // A chatty daemon (greets with a banner of the secret's length) and a silent one.
  const chatty = await startDecoy(join(decoyDir, 'chatty.sock'), 'X'.repeat(32));
  const silent = await startDecoy(join(decoyDir, 'silent.sock'), undefined);
  try {
    const proxy = await startNetworkProxy({
      allowedDomains: ['allowed.test'],
      loopbackPorts: [origin.port],
      resolver: createStaticResolver({ 'allowed.test': '127.0.0.1' }),
    });
    const endpoint = bridgeEndpointOf(proxy);
    if (endpoint === undefined) throw new Error('no bridge endpoint');
    const script = [
      `curl -sS --max-time 20 http://allowed.test:${origin.port}/http; c=$?; echo; echo http=$c`,
      `curl -sS --max-time 20 http://127.0.0.1:${origin.port}/mirror; c=$?; echo; echo mirror=$c`,
      `curl -sS --max-time 5 -x "$ALL_PROXY" http://allowed.test:${origin.port}/socks; c=$?; echo; echo socks=$c`,
    ].join('\n');
    const { child } = await runBehindBridge({
      proxy,
      argv: bwrapArgv(['sh', '-c', script]),
      beforeSpawn: async () => {
        // The bridge is up; now every socket in the proxy's folder leads to a host daemon.
        expect((await readdir(proxy.socketDir)).sort()).toEqual(
          [endpoint.httpSocketName, endpoint.socksSocketName, 'http.sock', 'socks.sock'].sort(),
        );
        await swapForSymlink(join(proxy.socketDir, endpoint.httpSocketName), join(decoyDir, 'chatty.sock'));
        await swapForSymlink(proxy.httpSocketPath, join(decoyDir, 'chatty.sock'));
        await swapForSymlink(join(proxy.socketDir, endpoint.socksSocketName), join(decoyDir, 'silent.sock'));
        await swapForSymlink(proxy.socksSocketPath, join(decoyDir, 'silent.sock'));
      },
    });
    const stdout = child.stdout();
    const codes = Object.fromEntries([...stdout.matchAll(/^(\w+)=(\d+)$/gm)].map((m) => [m[1], m[2]]));
    // The attack reached the daemons (the bridge did connect to them)...
    expect(chatty.connections(), child.stderr()).toBeGreaterThanOrEqual(2);
    expect(silent.connections()).toBeGreaterThanOrEqual(1);
    // ...but not a byte of the command's requests (nor of the bridge's CONNECT) arrived there.
    expect(chatty.bytes()).toBe(0);
    expect(silent.bytes()).toBe(0);
    // And the command got no connection anywhere: every request failed, the origin saw nothing.
    expect(stdout).not.toContain('hello');
    expect(codes.http).toBeDefined();
    expect(codes.http).not.toBe('0');
    expect(codes.mirror).not.toBe('0');
    expect(codes.socks).not.toBe('0');
    expect(origin.requests).toBe(0);
  } finally {
    await chatty.close();
    await silent.close();
    await rm(decoyDir, { recursive: true, force: true });
  }
});
