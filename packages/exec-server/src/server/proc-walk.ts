// The two looks at /proc that attribute a local connection (see local-peer.ts). The rows of
// /proc/net/tcp are read asynchronously (the kernel's work of writing them out stays in the
// thread pool) and matched without splitting every row. The walk of the processes' descriptors
// runs as steps in short slices of the event loop: a synchronous `readlink` of /proc/<pid>/fd/N
// costs ~1-2 us, where the same call through `fs/promises` cost the main thread a thread-pool
// round trip (~10-20 us), and a burst of connections walks every descriptor of every process. A
// slice ends after SLICE_MS and the walk goes on at the next turn, so a walk of any size (a
// command can hold a million descriptors) never holds the event loop for longer.
import { type Dir, opendirSync, readlinkSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';

/** Who holds a socket. */
export type SocketOwner =
  /** A holder whose user or pid namespace differs from the server's: a sandboxed process. */
  | { readonly kind: 'sandboxed'; readonly pid: number }
  /** A holder in the server's own user and pid namespaces, and no sandboxed holder. */
  | { readonly kind: 'host'; readonly pid: number }
  /** No holder found: it exited meanwhile, or runs where this /proc cannot see or read it. */
  | { readonly kind: 'unknown' };

/** Longest stretch of walking in one turn of the event loop. */
export const SLICE_MS = 1;

/** A walk: yields wherever it may pause, returns its answer. */
export type Walk<T> = Generator<void, T, void>;

/**
 * Runs `walk` in slices of at most ~{@link SLICE_MS}, one per turn of the event loop, until it
 * returns; rejects with what it throws, or once `abandoned()` says nobody waits for it any more.
 */
export function runInSlices<T>(walk: Walk<T>, abandoned: () => boolean): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const slice = (): void => {
      try {
        if (abandoned()) {
          walk.return(undefined as T);
          reject(new Error('the walk was given up'));
          return;
        }
        const started = performance.now();
        for (;;) {
          const step = walk.next();
          if (step.done === true) {
            resolve(step.value);
            return;
          }
          if (performance.now() - started >= SLICE_MS) break;
        }
        setImmediate(slice);
      } catch (error) {
        reject(error);
      }
    };
    slice();
  });
}

/** The first 96 bits of an IPv4-mapped IPv6 address, as an address key begins (proc-net-tcp.ts). */
export const IPV4_MAPPED_PREFIX = '00000000000000000000ffff';
/** Bytes of a table asked for in one read (fewer, larger reads: each is a trip to the thread pool). */
const READ_CHUNK_BYTES = 256 * 1024;
/** Links read between two chances to pause. */
const LINKS_PER_STEP = 32;

/** A 32-bit word as the kernel prints it: 8 hex digits, its bytes reversed on little-endian. */
function word(hex: string, littleEndian: boolean): string {
  return (
    littleEndian ? hex.slice(6, 8) + hex.slice(4, 6) + hex.slice(2, 4) + hex.slice(0, 2) : hex
  ).toUpperCase();
}

/** The ways an endpoint (`ADDRESS.PORT`, an address key) is printed: in tcp6, and in tcp if IPv4. */
function printed(endpoint: string, littleEndian: boolean): string[] {
  const dot = endpoint.lastIndexOf('.');
  const address = endpoint.slice(0, dot);
  const port = Number(endpoint.slice(dot + 1))
    .toString(16)
    .toUpperCase()
    .padStart(4, '0');
  let six = '';
  for (let at = 0; at < 32; at += 8) six += word(address.slice(at, at + 8), littleEndian);
  const forms = [`${six}:${port}`];
  if (address.startsWith(IPV4_MAPPED_PREFIX)) forms.push(`${word(address.slice(24), littleEndian)}:${port}`);
  return forms;
}

/** A row's local and remote fields as printed, uppercased (`0100007F:1F90 0100007F:C350`). */
function rowEndpoints(line: string): string | undefined {
  const colon = line.indexOf(':');
  if (colon < 0) return undefined;
  let start = colon + 1;
  while (line.charCodeAt(start) === 32) start++;
  const first = line.indexOf(' ', start);
  const second = first < 0 ? -1 : line.indexOf(' ', first + 1);
  return second < 0 ? undefined : line.slice(start, second).toUpperCase();
}

/** What {@link findRows} looks for. */
export interface RowsRequest {
  readonly procRoot: string;
  /**
   * Row identities as `proc-net-tcp.ts` writes them: `LOCAL.PORT>REMOTE.PORT`, each address as
   * 32 lowercase hex digits of its IPv6 form (IPv4 as `::ffff:a.b.c.d`).
   */
  readonly keys: readonly string[];
  /** Bytes read from each table at most; past it the walk throws. */
  readonly maxBytes: number;
  /** How the kernel prints each 32-bit word of an address: host byte order. */
  readonly littleEndian: boolean;
  /** True once nobody waits for the answer: the reading stops. */
  readonly abandoned: () => boolean;
}

/**
 * The inodes of the rows asked for, from /proc/net/tcp then tcp6 (a missing table has no rows),
 * by key; TIME_WAIT rows (inode 0) are nobody's. Each key is turned once into the kernel's
 * forms and each row is matched by its printed endpoints: only a matching row is split. The
 * reads are asynchronous: the kernel writes these tables out row by row as they are read (ms
 * per read with thousands of sockets), work that stays off the event loop.
 */
export async function findRows(request: RowsRequest): Promise<Map<string, number>> {
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
  const found = new Map<string, number>();
  const onLine = (line: string): void => {
    const endpoints = rowEndpoints(line);
    const keys = endpoints === undefined ? undefined : wanted.get(endpoints);
    if (keys === undefined) return;
    // sl local remote st tx:rx tr:when retrnsmt uid timeout inode ...
    const inode = Number(line.trim().split(/\s+/)[9]);
    if (!Number.isSafeInteger(inode) || inode <= 0) return;
    for (const key of keys) found.set(key, inode);
    wanted.delete(endpoints as string);
  };
  const buffer = Buffer.allocUnsafe(READ_CHUNK_BYTES);
  for (const table of ['tcp', 'tcp6']) {
    const path = `${request.procRoot}/net/${table}`;
    let handle: FileHandle;
    try {
      handle = await open(path, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue; // IPv6 disabled
      throw error;
    }
    try {
      let rest = '';
      let total = 0;
      for (;;) {
        const { bytesRead } = await handle.read(buffer, 0, READ_CHUNK_BYTES, null);
        if (bytesRead === 0) break;
        total += bytesRead;
        if (total > request.maxBytes) throw new Error(`${path} is larger than ${request.maxBytes} bytes`);
        const text = rest + buffer.toString('latin1', 0, bytesRead);
        let start = 0;
        for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n', start)) {
          onLine(text.slice(start, end));
          start = end + 1;
        }
        rest = text.slice(start);
        if (found.size === request.keys.length || request.abandoned()) return found;
      }
      if (rest !== '') onLine(rest);
    } finally {
      await handle.close();
    }
    if (found.size === request.keys.length) break;
  }
  return found;
}

function link(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined; // exited or closed meanwhile, or not ours to read
  }
}

/** The entries of a folder one by one (a process may hold a million descriptors). */
function* entries(path: string): Generator<string, void, void> {
  let dir: Dir;
  try {
    dir = opendirSync(path);
  } catch {
    return;
  }
  try {
    for (;;) {
      let entry: ReturnType<Dir['readSync']>;
      try {
        entry = dir.readSync();
      } catch {
        return; // the process exited meanwhile
      }
      if (entry === null) return;
      yield entry.name;
    }
  } finally {
    dir.closeSync();
  }
}

/** What {@link findOwners} looks for. */
export interface OwnersRequest {
  readonly procRoot: string;
  /** `socket:[N]` links. */
  readonly targets: readonly string[];
  /** This process's pid (`self` is walked first, and only as `self`). */
  readonly selfPid: number;
}

/**
 * Per socket, as a walk of its own would decide: held by this process makes it `host` (the
 * in-process client of an embedder or a test: nobody else can hold it without us passing it);
 * else any holder in another user or pid namespace makes it `sandboxed` (every such process is
 * looked at first); else the newest holder found in ours makes it `host`. Not found: absent.
 */
export function* findOwners(request: OwnersRequest): Walk<Map<string, SocketOwner>> {
  const { procRoot } = request;
  const wanted = new Set(request.targets);
  const owners = new Map<string, SocketOwner>();
  let sincePause = 0;
  /** Settles each socket still looked for among `pid`'s open files as `owner`. */
  function* visit(pid: string, owner: SocketOwner): Walk<void> {
    for (const fd of entries(`${procRoot}/${pid}/fd`)) {
      if (wanted.size === 0) return;
      if (++sincePause === LINKS_PER_STEP) {
        sincePause = 0;
        yield;
      }
      const target = link(`${procRoot}/${pid}/fd/${fd}`);
      if (target !== undefined && wanted.delete(target)) owners.set(target, owner);
    }
  }
  yield* visit('self', { kind: 'host', pid: request.selfPid });
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
  for (const pid of entries(procRoot)) {
    if (!/^[0-9]+$/.test(pid) || pid === self) continue;
    const ns = namespaces(pid);
    if (ns !== undefined) (ns === own ? ours : foreign).push(pid);
    if (++sincePause === LINKS_PER_STEP) {
      sincePause = 0;
      yield;
    }
  }
  // Newest first: a client is more often a recent process than init or a long-running daemon.
  const newestFirst = (a: string, b: string): number => Number(b) - Number(a);
  for (const pid of foreign.sort(newestFirst)) yield* visit(pid, { kind: 'sandboxed', pid: Number(pid) });
  // Only now as host: a socket held both inside a sandbox and outside is sandboxed.
  for (const pid of ours.sort(newestFirst)) yield* visit(pid, { kind: 'host', pid: Number(pid) });
  return owners;
}
