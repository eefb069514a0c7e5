// A TCP hop in front of a server that can strand its current connections: nothing more is
// forwarded either way, and the server's side is left open and unread whatever happens to the
// client's side, as after a network cut the server never hears of (no FIN, no RST, no pong).
// The FaultProxy cannot do this on its own: its faults apply to every connection, new ones
// included, and a connection it drops or cuts is closed on both sides.
import { once } from 'node:events';
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';

/** See the file comment. Listens on 127.0.0.1:0; `close()` destroys everything. */
export class StrandingHop implements AsyncDisposable {
  /** `ws://127.0.0.1:PORT` to point clients (or a FaultProxy) at. */
  readonly url: string;
  readonly #server: Server;
  readonly #live = new Set<readonly [Socket, Socket]>();
  readonly #stranded = new Set<Socket>();
  #closing: Promise<void> | undefined;

  private constructor(server: Server, url: string) {
    this.#server = server;
    this.url = url;
  }

  /** Starts a hop forwarding every connection to `target` (`ws://host:port`). */
  static async start(target: string): Promise<StrandingHop> {
    const { hostname, port } = new URL(target);
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('stranding hop: no TCP address');
    const hop = new StrandingHop(server, `ws://127.0.0.1:${address.port}`);
    server.on('connection', (client) => hop.#accept(client, hostname, Number(port)));
    return hop;
  }

  /** Strands every current connection (see the file comment); later connections are forwarded. */
  strand(): number {
    const pairs = [...this.#live];
    this.#live.clear();
    for (const [client, upstream] of pairs) {
      for (const socket of [client, upstream]) {
        socket.removeAllListeners('data');
        socket.removeAllListeners('close');
      }
      // Unread: the server's pings are never answered and its writes pile up in the kernel.
      upstream.pause();
      this.#stranded.add(upstream);
      this.#stranded.add(client);
    }
    return pairs.length;
  }

  /** Stops listening and destroys every socket, stranded ones included. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      for (const pair of this.#live) for (const socket of pair) socket.destroy();
      for (const socket of this.#stranded) socket.destroy();
      this.#live.clear();
      this.#stranded.clear();
      await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    })();
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #accept(client: Socket, host: string, port: number): void {
    const upstream = tcpConnect({ host, port });
    const pair = [client, upstream] as const;
    this.#live.add(pair);
    client.on('data', (bytes: Buffer) => upstream.write(bytes));
    upstream.on('data', (bytes: Buffer) => client.write(bytes));
    for (const socket of pair) {
      socket.on('error', () => {});
      socket.on('close', () => {
        if (!this.#live.delete(pair)) return;
        client.destroy();
        upstream.destroy();
      });
    }
  }
}
