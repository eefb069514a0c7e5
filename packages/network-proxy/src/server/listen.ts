import type { Server, Socket } from 'node:net';

/** A TCP listen address. */
export interface ProxyTcpAddress {
  readonly host: string;
  readonly port: number;
}

/** Listens on a unix socket path or a TCP address; rejects on a listen error. */
export function listen(server: Server, target: string | ProxyTcpAddress): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    const done = (): void => {
      server.off('error', reject);
      resolve();
    };
    if (typeof target === 'string') server.listen(target, done);
    else server.listen(target.port, target.host, done);
  });
}

/** Closes a server (no-op if it is not listening); resolves once it stopped. */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) {
      resolve();
      return;
    }
    server.close(() => resolve());
  });
}

/** The bound TCP address of a listening server. */
export function tcpAddressOf(server: Server): ProxyTcpAddress {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('TCP listener has no address');
  return { host: address.address, port: address.port };
}

/**
 * Makes `server` write `greeting` first on every connection it accepts, before any protocol
 * handler runs (the bridge checks it to know it reached the proxy and not a planted socket).
 */
export function greetOnConnect(server: Server, greeting: Buffer): void {
  server.prependListener('connection', (socket: Socket) => {
    socket.write(greeting);
  });
}
