// A host for reverse-connection tests: a bare `ws` server that accepts the executor's sockets.
import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { type WebSocket, WebSocketServer } from 'ws';

/** A host (on `port`, default any): accepts the executor's sockets and hands them (with their upgrade request) out in order. */
export async function startHost(options: { readonly port?: number } = {}): Promise<{
  url: string;
  /** Sockets accepted so far. */
  readonly count: () => number;
  next(): Promise<{ socket: WebSocket; request: IncomingMessage }>;
  close(): Promise<void>;
}> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: options.port ?? 0 });
  await once(wss, 'listening');
  const queue: { socket: WebSocket; request: IncomingMessage }[] = [];
  const waiters: ((value: { socket: WebSocket; request: IncomingMessage }) => void)[] = [];
  let count = 0;
  wss.on('connection', (socket, request) => {
    count += 1;
    const waiter = waiters.shift();
    if (waiter) waiter({ socket, request });
    else queue.push({ socket, request });
  });
  const { port } = wss.address() as { port: number };
  return {
    url: `ws://127.0.0.1:${port}/executors`,
    count: () => count,
    next: () => {
      const queued = queue.shift();
      return queued ? Promise.resolve(queued) : new Promise((resolve) => waiters.push(resolve));
    },
    close: async () => {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
