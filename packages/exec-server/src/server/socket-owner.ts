// Which process holds a socket (Linux): walks /proc/<pid>/fd for the link `socket:[inode]`, and
// tells whether that process runs in this server's user and pid namespaces or in others (a
// bubblewrap sandbox has its own of both). Every call is async and bounded by the caller's signal.
import { readdir, readlink } from 'node:fs/promises';

/** Who holds a socket. */
export type SocketOwner =
  /** A holder whose user or pid namespace differs from the server's: a sandboxed process. */
  | { readonly kind: 'sandboxed'; readonly pid: number }
  /** A holder in the server's own user and pid namespaces, and no sandboxed holder. */
  | { readonly kind: 'host'; readonly pid: number }
  /** No holder found: it exited meanwhile, or runs where this /proc cannot see or read it. */
  | { readonly kind: 'unknown' };

/** How many /proc lookups run at once (libuv runs 4 fs calls at a time anyway). */
const PROC_SCAN_CONCURRENCY = 8;

interface Namespaces {
  readonly user: string;
  readonly pid: string;
}

async function namespacesOf(procRoot: string, pid: string): Promise<Namespaces | undefined> {
  try {
    const [user, pidNs] = await Promise.all([
      readlink(`${procRoot}/${pid}/ns/user`),
      readlink(`${procRoot}/${pid}/ns/pid`),
    ]);
    return { user, pid: pidNs };
  } catch {
    return undefined; // exited, or not ours to inspect
  }
}

/** True when `pid` has `target` (`socket:[inode]`) among its open files. */
async function holds(procRoot: string, pid: string, target: string, signal: AbortSignal): Promise<boolean> {
  let fds: string[];
  try {
    fds = await readdir(`${procRoot}/${pid}/fd`);
  } catch {
    return false;
  }
  for (const fd of fds) {
    signal.throwIfAborted();
    try {
      if ((await readlink(`${procRoot}/${pid}/fd/${fd}`)) === target) return true;
    } catch {
      // Closed meanwhile.
    }
  }
  return false;
}

/**
 * Runs `visit` over `items` with at most {@link PROC_SCAN_CONCURRENCY} at once, in order of
 * start; stops starting new ones once `visit` returned true. Resolves with the items it was true for.
 */
async function scan<T>(
  items: readonly T[],
  visit: (item: T) => Promise<boolean>,
  stopAtFirst: boolean,
): Promise<T[]> {
  const found: T[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length && !(stopAtFirst && found.length > 0)) {
      const item = items[next++] as T;
      if (await visit(item)) found.push(item);
    }
  };
  await Promise.all(Array.from({ length: PROC_SCAN_CONCURRENCY }, worker));
  return found;
}

/**
 * Finds the process holding socket `inode` and classifies it. Any holder in another user or pid
 * namespace than this process makes it `sandboxed` (checked first, over every such process);
 * otherwise the first holder found in ours makes it `host` (this process is looked at first: the
 * in-process client of an embedder or a test). Throws only when `signal` aborts.
 */
export async function findSocketOwner(
  inode: number,
  signal: AbortSignal,
  procRoot: string = '/proc',
): Promise<SocketOwner> {
  const target = `socket:[${inode}]`;
  // The socket is ours (an in-process client): nobody else can hold it without us passing it.
  if (await holds(procRoot, 'self', target, signal)) return { kind: 'host', pid: process.pid };
  const own = await namespacesOf(procRoot, 'self');
  if (own === undefined) return { kind: 'unknown' };
  const self = String(process.pid);
  const pids = (await readdir(procRoot)).filter((name) => /^[0-9]+$/.test(name) && name !== self);
  const foreign: string[] = [];
  const ours: string[] = [];
  await scan(
    pids,
    async (pid) => {
      signal.throwIfAborted();
      const ns = await namespacesOf(procRoot, pid);
      if (ns === undefined) return false;
      (ns.user === own.user && ns.pid === own.pid ? ours : foreign).push(pid);
      return false;
    },
    false,
  );
  // Newest first: a client is more often a recent process than init or a long-running daemon.
  const newestFirst = (a: string, b: string): number => Number(b) - Number(a);
  foreign.sort(newestFirst);
  ours.sort(newestFirst);
  const [sandboxed] = await scan(foreign, (pid) => holds(procRoot, pid, target, signal), true);
  if (sandboxed !== undefined) return { kind: 'sandboxed', pid: Number(sandboxed) };
  const [host] = await scan(ours, (pid) => holds(procRoot, pid, target, signal), true);
  if (host !== undefined) return { kind: 'host', pid: Number(host) };
  return { kind: 'unknown' };
}
