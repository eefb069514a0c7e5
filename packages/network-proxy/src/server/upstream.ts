import { isIP, type LookupFunction, Socket } from 'node:net';

/**
 * A `lookup` for `net.connect`/`http.request` that returns only the addresses the gate checked,
 * so the connection goes exactly where the policy looked (no second DNS query to rebind).
 */
export function pinnedLookup(addresses: readonly string[]): LookupFunction {
  const entries = addresses.map((address) => ({ address, family: isIP(address) }));
  return (hostname, options, callback) => {
    const wanted =
      options.family === 4 || options.family === 6
        ? entries.filter((e) => e.family === options.family)
        : entries;
    const first = wanted[0];
    if (first === undefined) {
      const error = Object.assign(new Error(`no usable address for ${hostname}`), { code: 'ENOTFOUND' });
      callback(error, '', 0);
      return;
    }
    if (options.all) callback(null, wanted);
    else callback(null, first.address, first.family);
  };
}

/** The errno-style code of a connect failure (Happy Eyeballs reports an AggregateError). */
export function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, errors } = error as { code?: unknown; errors?: unknown };
  if (typeof code === 'string') return code;
  if (Array.isArray(errors)) return errorCode(errors[0]);
  return undefined;
}

/** Options for `connectUpstream`. */
export interface ConnectUpstreamOptions {
  /** The name the command asked for (used only for error text and pooling). */
  readonly host: string;
  readonly port: number;
  /** The checked addresses to try, in order. */
  readonly addresses: readonly string[];
  readonly timeoutMs: number;
}

/** Opens a TCP connection to one of the pinned addresses; rejects on failure or timeout. */
export function connectUpstream(options: ConnectUpstreamOptions): Promise<Socket> {
  return new Promise((resolve, reject) => {
    // Half-open so a client that shuts down its sending side still gets the reply.
    const socket = new Socket({ allowHalfOpen: true });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        Object.assign(new Error(`connect to ${options.host}:${options.port} timed out`), {
          code: 'ETIMEDOUT',
        }),
      );
    }, options.timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.removeListener('error', onError);
      // Until the caller splices it, a late error must not go unhandled (it would crash the executor).
      socket.on('error', () => socket.destroy());
      resolve(socket);
    });
    const onError = (error: Error): void => {
      clearTimeout(timer);
      socket.destroy();
      reject(error);
    };
    socket.once('error', onError);
    socket.setNoDelay(true);
    socket.connect({
      host: options.host,
      port: options.port,
      lookup: pinnedLookup(options.addresses),
      autoSelectFamily: true,
    });
  });
}

/**
 * Splices two sockets together until either side ends; errors on either side tear down both.
 * `onClose` runs once when both are closed.
 */
export function splice(a: Socket, b: Socket, onClose?: () => void): void {
  let closed = 0;
  const done = (): void => {
    closed++;
    if (closed === 2) onClose?.();
  };
  const fail = (): void => {
    a.destroy();
    b.destroy();
  };
  a.on('error', fail);
  b.on('error', fail);
  a.once('close', done);
  b.once('close', done);
  // Half-close is forwarded: `pipe` ends the writable side when the readable side ends.
  a.pipe(b);
  b.pipe(a);
}
