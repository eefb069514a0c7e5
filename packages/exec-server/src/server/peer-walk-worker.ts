import type * as fs from 'node:fs';
import type { MessagePort } from 'node:worker_threads';

/** Who holds a socket. */
export type SocketOwner =
  /** A holder whose user or pid namespace differs from the server's: a sandboxed process. */
  | { readonly kind: 'sandboxed'; readonly pid: number }
  /** A holder in the server's own user and pid namespaces, and no sandboxed holder. */
  | { readonly kind: 'host'; readonly pid: number }
  /** No holder found: it exited meanwhile, or runs where this /proc cannot see or read it. */
  | { readonly kind: 'unknown' };

/**
 * Find the rows of connections in /proc/net/tcp and tcp6. A key is a row's identity as
 * `proc-net-tcp.ts` writes it: `LOCAL.PORT>REMOTE.PORT`, each address as 32 lowercase hex digits
 * of its IPv6 form (IPv4 as `::ffff:a.b.c.d`).
 */
export interface TablesRequest {
  readonly id: number;
  readonly op: 'tables';
  readonly procRoot: string;
  readonly keys: readonly string[];
  /** Bytes read from each table at most; past it the request fails. */
  readonly maxBytes: number;
  /** How the kernel prints each 32-bit word of an address: host byte order. */
  readonly littleEndian: boolean;
}

/** Find the processes holding sockets (`socket:[N]`); see {@link peerWalkProgram}. */
export interface OwnersRequest {
  readonly id: number;
  readonly op: 'owners';
  readonly procRoot: string;
  readonly targets: readonly string[];
  /** This process's pid (`self` is walked first, and only as `self`). */
  readonly selfPid: number;
}

export type PeerWalkRequest = TablesRequest | OwnersRequest;

/**
 * The answer to one request: what was found (keys or targets not listed were not found), or
 * `error` (a table that could not be read, a walk given up: nothing can be concluded).
 */
export interface PeerWalkReply {
  readonly id: number;
  readonly inodes?: readonly (readonly [string, number])[];
  readonly owners?: readonly (readonly [string, SocketOwner])[];
  readonly error?: string;
}

/** The program's parts a test can call in this thread (`port` null). */
export interface PeerWalkParts {
  readonly findRows: (request: Omit<TablesRequest, 'id' | 'op'>) => [string, number][];
  readonly findOwners: (request: Omit<OwnersRequest, 'id' | 'op'>) => [string, SocketOwner][];
}

/**
 * Attributing connections, run in a worker thread of its own (see `peer-walk.ts`): this function
 * is the worker's whole program, so it names no module binding (its text is what the worker
 * runs: the modules come in as arguments). Synchronous throughout and off the event loop: a
 * `readlink` in /proc costs ~1-2 us here against ~10-20 us of the main thread for each
 * asynchronous one, and a burst of connections walks every descriptor of every process.
 *
 * `cancel[0]` holds the highest request id whose callers all gave up: a walk that finds its id
 * there stops (its answer is an error), so a walk a hostile process made slow (thousands of
 * descriptors) holds up no later one for longer than its callers waited.
 */
export function peerWalkProgram(
  files: typeof fs,
  port: MessagePort | null,
  cancel: Int32Array,
): PeerWalkParts {
  const WORKER_THREAD_NAME = 'execd-peers';
  const IPV4_MAPPED_PREFIX = '00000000000000000000ffff';
  const READ_CHUNK_BYTES = 64 * 1024;
  /** Links read between two looks at `cancel`. */
  const CANCEL_CHECK_EVERY = 256;
  let current = 0;
  let sinceCheck = 0;

  const givenUp = (): boolean => {
    if (++sinceCheck < CANCEL_CHECK_EVERY) return false;
    sinceCheck = 0;
    return Atomics.load(cancel, 0) >= current;
  };

  /** A 32-bit word as the kernel prints it: 8 hex digits, its bytes reversed on little-endian. */
  const word = (hex: string, littleEndian: boolean): string =>
    (littleEndian
      ? hex.slice(6, 8) + hex.slice(4, 6) + hex.slice(2, 4) + hex.slice(0, 2)
      : hex
    ).toUpperCase();

  /** The ways an endpoint (`ADDRESS.PORT`, address key) is printed: in tcp6, and in tcp if IPv4. */
  const printed = (endpoint: string, littleEndian: boolean): string[] => {
    const dot = endpoint.lastIndexOf('.');
    const address = endpoint.slice(0, dot);
    const portHex = Number(endpoint.slice(dot + 1))
      .toString(16)
      .toUpperCase()
      .padStart(4, '0');
    let six = '';
    for (let at = 0; at < 32; at += 8) six += word(address.slice(at, at + 8), littleEndian);
    const forms = [`${six}:${portHex}`];
    if (address.startsWith(IPV4_MAPPED_PREFIX))
      forms.push(`${word(address.slice(24), littleEndian)}:${portHex}`);
    return forms;
  };

  /** The local and remote fields of a row, uppercased (`0100007F:1F90 0100007F:C350`). */
  const rowEndpoints = (line: string): string | undefined => {
    const colon = line.indexOf(':');
    if (colon < 0) return undefined;
    let start = colon + 1;
    while (line.charCodeAt(start) === 32) start++;
    const first = line.indexOf(' ', start);
    const second = first < 0 ? -1 : line.indexOf(' ', first + 1);
    return second < 0 ? undefined : line.slice(start, second).toUpperCase();
  };

  const findRows = (request: Omit<TablesRequest, 'id' | 'op'>): [string, number][] => {
    const wanted = new Map<string, string[]>();
    for (const key of request.keys) {
      const [local = '', remote = ''] = key.split('>');
      for (const l of printed(local, request.littleEndian))
        for (const r of printed(remote, request.littleEndian)) {
          const same = wanted.get(`${l} ${r}`);
          if (same === undefined) wanted.set(`${l} ${r}`, [key]);
          else same.push(key);
        }
    }
    const found: [string, number][] = [];
    let left = request.keys.length;
    const onLine = (line: string): void => {
      const endpoints = rowEndpoints(line);
      const keys = endpoints === undefined ? undefined : wanted.get(endpoints);
      if (keys === undefined) return;
      // sl local remote st tx:rx tr:when retrnsmt uid timeout inode ...; 0 for TIME_WAIT rows.
      const inode = Number(line.trim().split(/\s+/)[9]);
      if (!Number.isSafeInteger(inode) || inode <= 0) return;
      for (const key of keys) found.push([key, inode]);
      left -= keys.length;
      wanted.delete(endpoints as string);
    };
    const buffer = Buffer.allocUnsafe(READ_CHUNK_BYTES);
    for (const table of ['tcp', 'tcp6']) {
      const path = `${request.procRoot}/net/${table}`;
      let fd: number;
      try {
        fd = files.openSync(path, 'r');
      } catch (error) {
        // A missing tcp6 table (IPv6 disabled) has no rows; anything else is an error.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw error;
      }
      try {
        let rest = '';
        let total = 0;
        for (;;) {
          const read = files.readSync(fd, buffer, 0, READ_CHUNK_BYTES, null);
          if (read === 0) break;
          total += read;
          if (total > request.maxBytes) throw new Error(`${path} is larger than ${request.maxBytes} bytes`);
          const text = rest + buffer.toString('latin1', 0, read);
          let start = 0;
          for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n', start)) {
            onLine(text.slice(start, end));
            start = end + 1;
          }
          rest = text.slice(start);
          if (left <= 0) return found;
        }
        if (rest !== '') onLine(rest);
      } finally {
        files.closeSync(fd);
      }
      if (left <= 0) break;
    }
    return found;
  };

  const link = (path: string): string | undefined => {
    try {
      return files.readlinkSync(path);
    } catch {
      return undefined; // exited or closed meanwhile, or not ours to read
    }
  };

  const list = (path: string): string[] => {
    try {
      return files.readdirSync(path);
    } catch {
      return [];
    }
  };

  /** Calls `visit` for each of `pid`'s open files that is a socket still looked for. */
  const visitSockets = (
    procRoot: string,
    pid: string,
    wanted: Set<string>,
    visit: (target: string) => void,
  ): void => {
    for (const fd of list(`${procRoot}/${pid}/fd`)) {
      if (wanted.size === 0) return;
      if (givenUp()) throw new Error('the walk was given up');
      const target = link(`${procRoot}/${pid}/fd/${fd}`);
      if (target !== undefined && wanted.has(target)) visit(target);
    }
  };

  /**
   * Per socket, as a walk of its own would decide: held by this process makes it `host` (the
   * in-process client of an embedder or a test: nobody else can hold it without us passing it);
   * else any holder in another user or pid namespace makes it `sandboxed` (every such process is
   * looked at first); else the newest holder found in ours makes it `host`. Not found: unlisted.
   */
  const findOwners = (request: Omit<OwnersRequest, 'id' | 'op'>): [string, SocketOwner][] => {
    const { procRoot } = request;
    const wanted = new Set(request.targets);
    const owners: [string, SocketOwner][] = [];
    const settle = (target: string, owner: SocketOwner): void => {
      owners.push([target, owner]);
      wanted.delete(target);
    };
    visitSockets(procRoot, 'self', wanted, (target) =>
      settle(target, { kind: 'host', pid: request.selfPid }),
    );
    if (wanted.size === 0) return owners;
    const namespaces = (pid: string): string | undefined => {
      const user = link(`${procRoot}/${pid}/ns/user`);
      const pidNs = link(`${procRoot}/${pid}/ns/pid`);
      return user === undefined || pidNs === undefined ? undefined : `${user} ${pidNs}`;
    };
    const own = namespaces('self');
    if (own === undefined) return owners;
    const self = String(request.selfPid);
    const foreign: string[] = [];
    const ours: string[] = [];
    for (const pid of list(procRoot)) {
      if (!/^[0-9]+$/.test(pid) || pid === self) continue;
      const ns = namespaces(pid);
      if (ns !== undefined) (ns === own ? ours : foreign).push(pid);
    }
    // Newest first: a client is more often a recent process than init or a long-running daemon.
    const newestFirst = (a: string, b: string): number => Number(b) - Number(a);
    for (const pid of foreign.sort(newestFirst))
      visitSockets(procRoot, pid, wanted, (target) =>
        settle(target, { kind: 'sandboxed', pid: Number(pid) }),
      );
    // Only now as host: a socket held both inside a sandbox and outside is sandboxed.
    for (const pid of ours.sort(newestFirst))
      visitSockets(procRoot, pid, wanted, (target) => settle(target, { kind: 'host', pid: Number(pid) }));
    return owners;
  };

  const parts: PeerWalkParts = { findRows, findOwners };
  if (port === null) return parts;
  try {
    // The thread's name in `top -H` and /proc (the test kit's leak check knows it by this name).
    files.writeFileSync('/proc/thread-self/comm', WORKER_THREAD_NAME);
  } catch {
    // Not Linux, or no /proc: the name is cosmetic.
  }
  port.on('message', (message: PeerWalkRequest) => {
    current = message.id;
    sinceCheck = 0;
    try {
      const reply: PeerWalkReply =
        message.op === 'tables'
          ? { id: message.id, inodes: findRows(message) }
          : { id: message.id, owners: findOwners(message) };
      port.postMessage(reply);
    } catch (error) {
      port.postMessage({ id: message.id, error: String(error) } satisfies PeerWalkReply);
    }
  });
  return parts;
}
