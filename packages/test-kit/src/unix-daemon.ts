import { createServer } from 'node:net';

/** A host daemon on a Unix socket: what a sandboxed command must not reach. */
export interface UnixDaemon extends AsyncDisposable {
  /** Connections it accepted so far. */
  readonly connections: number;
  close(): Promise<void>;
}

/** Listens on `path`; every connection is counted and answered `secret\n`, then closed. */
export async function listenUnixDaemon(path: string): Promise<UnixDaemon> {
  let connections = 0;
  const server = createServer((socket) => {
    connections++;
    socket.end('secret\n');
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closed ??= new Promise<void>((resolve) => server.close(() => resolve()));
    return closed;
  };
  return {
    get connections() {
      return connections;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
