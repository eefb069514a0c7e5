// Attributing a loopback connection to the process that made it, over real sockets and real
// processes (the sandboxed case runs through a whole server in sandboxed-peer.test.ts).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { ProcessTracker, waitFor } from '@execd/test-kit';
import { afterEach, describe, expect, test } from 'vitest';
import { checkLocalPeer } from '../../src/server/index.ts';
import { findPeerSocketInode } from '../../src/server/proc-net-tcp.ts';

const tracker = new ProcessTracker();
const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A TCP server on 127.0.0.1:0 whose next accepted socket `accepted()` resolves with. */
async function listen(): Promise<{ port: number; accepted: () => Promise<Socket> }> {
  // Half-open: a server socket whose client left stays usable (as an HTTP request in flight).
  const server: Server = createServer({ allowHalfOpen: true });
  const sockets: Socket[] = [];
  server.on('connection', (socket) => sockets.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    accepted: async () => (await once(server, 'connection'))[0] as Socket,
  };
}

function inodeOf(socket: Socket): Promise<number | undefined> {
  return findPeerSocketInode(
    { address: socket.remoteAddress ?? '', port: socket.remotePort ?? 0 },
    { address: socket.localAddress ?? '', port: socket.localPort ?? 0 },
    AbortSignal.timeout(10_000),
  );
}

describe.skipIf(process.platform !== 'linux')('checkLocalPeer on Linux', () => {
  test('a client in this process is a host peer: this pid', async () => {
    const { port, accepted } = await listen();
    const waiting = accepted();
    const client = connect(port, '127.0.0.1');
    cleanups.push(() => void client.destroy());
    const socket = await waiting;
    expect(await checkLocalPeer(socket, { mode: 'strict' })).toEqual({
      allowed: true,
      peer: 'host',
      pid: process.pid,
    });
  });

  test('a client in another, unsandboxed process is a host peer: its pid', async () => {
    const { port, accepted } = await listen();
    const waiting = accepted();
    const child = spawn(
      process.execPath,
      [
        '-e',
        "require('node:net').connect(+process.argv[1], '127.0.0.1'); setInterval(() => {}, 1e6)",
        String(port),
      ],
      { stdio: 'ignore' },
    );
    tracker.add(child.pid ?? 0);
    cleanups.push(() => void child.kill('SIGKILL'));
    const socket = await waiting;
    expect(await checkLocalPeer(socket, { mode: 'strict' })).toEqual({
      allowed: true,
      peer: 'host',
      pid: child.pid,
    });
  });

  test('a burst of 500 connections from another process: every one attributed to its pid', async () => {
    // Asked all at once, as a flood of upgrades would: the walks of the attribution thread answer
    // each connection by its own socket (a wrong row or a dropped question fails one of them).
    const server: Server = createServer({ allowHalfOpen: true });
    const sockets: Socket[] = [];
    const all = new Promise<void>((resolve) =>
      server.on('connection', (socket) => {
        sockets.push(socket);
        if (sockets.length === 500) resolve();
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const child = spawn(
      process.execPath,
      [
        '-e',
        "for (let i = 0; i < 500; i++) require('node:net').connect(+process.argv[1], '127.0.0.1'); setInterval(() => {}, 1e6)",
        String(port),
      ],
      { stdio: 'ignore' },
    );
    tracker.add(child.pid ?? 0);
    cleanups.push(() => void child.kill('SIGKILL'));
    await all;
    const verdicts = await Promise.all(sockets.map((socket) => checkLocalPeer(socket, { mode: 'strict' })));
    expect(new Set(verdicts.map((verdict) => JSON.stringify(verdict)))).toEqual(
      new Set([JSON.stringify({ allowed: true, peer: 'host', pid: child.pid })]),
    );
  });

  test('a loopback peer whose socket nobody holds any more: refused when strict, allowed when sandboxed-only', async () => {
    const { port, accepted } = await listen();
    const waiting = accepted();
    const client = connect(port, '127.0.0.1');
    const socket = await waiting;
    expect(await inodeOf(socket)).toBeTypeOf('number');
    client.destroy();
    // The client's end is orphaned (inode 0) once closed: nobody can be found holding it.
    await waitFor(async () => (await inodeOf(socket)) === undefined, {
      what: 'the client socket to be released',
    });
    expect(await checkLocalPeer(socket, { mode: 'strict' })).toEqual({
      allowed: false,
      peer: 'unattributed',
    });
    expect(await checkLocalPeer(socket, { mode: 'sandboxed-only' })).toEqual({
      allowed: true,
      peer: 'unattributed',
    });
  });
});

describe('checkLocalPeer is a no-op when off or off Linux', () => {
  test.each([
    ['off', process.platform],
    ['strict', 'darwin'],
  ] as const)('mode %s on %s', async (mode, platform) => {
    const { port, accepted } = await listen();
    const waiting = accepted();
    const client = connect(port, '127.0.0.1');
    cleanups.push(() => void client.destroy());
    const socket = await waiting;
    client.destroy();
    expect(await checkLocalPeer(socket, { mode, platform })).toEqual({ allowed: true, peer: 'unchecked' });
  });
});
