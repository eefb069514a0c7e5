/**
 * The network bridge process (`dist/bridge.js`). It runs inside the sandbox's network namespace
 * only (not its mount namespace, not its seccomp filter): it listens on 127.0.0.1 (and ::1) there
 * and forwards every connection to the proxy's bridge sockets on the host filesystem, but only
 * after the socket proved to be the proxy: the proxy writes its secret first on every connection,
 * and the bridge compares it (constant time) before it sends a byte of its own or of the client.
 * It exits when its stdin closes (the executor went away), on SIGTERM/SIGINT, or when a listener
 * fails. It looks up no programs (no PATH use).
 *
 * Usage: node bridge.js '<BridgeConfig JSON>', with the secret as the first stdin line (hex) and
 * the proxy's socket folder open as fd 3 (the config's paths go through /proc/self/fd/3).
 */
import net from 'node:net';
import {
  BRIDGE_GREETING_TIMEOUT_MS,
  BRIDGE_READY_LINE,
  BRIDGE_SECRET_BYTES,
  type BridgeListener,
  type BridgeTarget,
  parseBridgeConfig,
} from './bridge-config.ts';
import { awaitGreeting, readSecretLine } from './greeting.ts';

/** A proxy's reply to the tunnel CONNECT is a short header block; more means something is wrong. */
const MAX_TUNNEL_REPLY_BYTES = 16 * 1024;

function splice(a: net.Socket, b: net.Socket): void {
  const fail = (): void => {
    a.destroy();
    b.destroy();
  };
  a.on('error', fail);
  b.on('error', fail);
  a.pipe(b);
  b.pipe(a);
}

/** Sends `CONNECT 127.0.0.1:port` on a verified proxy connection and splices on `200`. */
function openTunnel(client: net.Socket, upstream: net.Socket, early: Buffer, port: number): void {
  let reply = Buffer.alloc(0);
  const onData = (chunk: Buffer): void => {
    reply = Buffer.concat([reply, chunk]);
    const end = reply.indexOf('\r\n\r\n');
    if (end < 0) {
      if (reply.length > MAX_TUNNEL_REPLY_BYTES) upstream.destroy();
      return;
    }
    upstream.off('data', onData);
    // Anything but 200 is a denial (recorded by the proxy); the client sees its connection closed.
    if (!/^HTTP\/1\.[01] 200/.test(reply.subarray(0, end).toString('latin1'))) {
      upstream.destroy();
      client.destroy();
      return;
    }
    const rest = reply.subarray(end + 4);
    if (rest.length > 0) client.write(rest);
    splice(client, upstream);
    client.resume();
  };
  upstream.on('data', onData);
  upstream.once('close', () => {
    if (!client.destroyed && client.isPaused()) client.destroy();
  });
  upstream.write(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
  if (early.length > 0) onData(early);
  upstream.resume();
}

function handle(client: net.Socket, target: BridgeTarget, secret: Buffer): void {
  // Nothing of the client is forwarded until the peer proved to be the proxy.
  client.pause();
  const upstream = net.connect({ path: target.path, allowHalfOpen: true });
  const drop = (): void => {
    upstream.destroy();
    client.destroy();
  };
  let verified = false;
  client.on('error', drop);
  upstream.on('error', drop);
  client.once('close', () => {
    if (!verified) upstream.destroy();
  });
  void awaitGreeting(upstream, secret, BRIDGE_GREETING_TIMEOUT_MS).then((rest) => {
    if (rest === undefined || client.destroyed) {
      drop();
      return;
    }
    verified = true;
    if (target.kind === 'tunnel') {
      openTunnel(client, upstream, rest, target.port);
      return;
    }
    if (rest.length > 0) client.write(rest);
    splice(client, upstream);
    client.resume();
  });
}

function listenOn(listener: BridgeListener, host: string, secret: Buffer): Promise<net.Server | undefined> {
  return new Promise((resolve, reject) => {
    const server = net.createServer({ allowHalfOpen: true }, (client) =>
      handle(client, listener.target, secret),
    );
    server.once('error', (error: NodeJS.ErrnoException) => {
      // ::1 is missing when IPv6 is disabled; 127.0.0.1 is what the proxy variables name.
      if (host === '::1') resolve(undefined);
      else reject(error);
    });
    server.listen(listener.port, host, () => {
      server.on('error', (error) => process.stderr.write(`execd network bridge: ${error.message}\n`));
      resolve(server);
    });
  });
}

async function main(): Promise<void> {
  const config = parseBridgeConfig(process.argv[2] ?? '');
  const secret = await readSecretLine(process.stdin, BRIDGE_SECRET_BYTES);
  for (const listener of config.listeners) {
    await listenOn(listener, '127.0.0.1', secret);
    await listenOn(listener, '::1', secret);
  }
  const exit = (): never => process.exit(0);
  process.on('SIGTERM', exit);
  process.on('SIGINT', exit);
  process.stdin.on('end', exit);
  process.stdin.on('close', exit);
  process.stdin.on('error', exit);
  process.stdin.resume();
  process.stdout.write(`${BRIDGE_READY_LINE}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`execd network bridge: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
