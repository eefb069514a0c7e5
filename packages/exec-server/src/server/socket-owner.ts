// Which process holds a socket (Linux): walks /proc/<pid>/fd for the link `socket:[inode]`, and
// tells whether that process runs in this server's user and pid namespaces or in others (a
// bubblewrap sandbox has its own of both). Every call is async and bounded by the caller's signal.
// Lookups share walks (see shared-walks.ts): a walk reads every descriptor of every process, the
// server's own included (one per connection and child pipe), so a burst of N connections costs a
// couple of walks instead of N.
import { readdir, readlink } from 'node:fs/promises';
import { byQuery, SharedWalks, type WalkQuestion } from './shared-walks.ts';

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

/** A question of a walk: the `socket:[inode]` link looked for. */
type Lookup = WalkQuestion<string, SocketOwner>;

/**
 * Calls `visit` for each link among `pid`'s open files that names a socket still looked for,
 * reading the links one after the other; stops early once nothing is looked for.
 */
async function visitSocketLinks(
  procRoot: string,
  pid: string,
  wanted: Map<string, Lookup[]>,
  visit: (lookups: Lookup[]) => void,
): Promise<void> {
  let fds: string[];
  try {
    fds = await readdir(`${procRoot}/${pid}/fd`);
  } catch {
    return;
  }
  for (const fd of fds) {
    if (wanted.size === 0) return;
    let link: string;
    try {
      link = await readlink(`${procRoot}/${pid}/fd/${fd}`);
    } catch {
      continue; // closed meanwhile
    }
    const lookups = wanted.get(link);
    if (lookups !== undefined) visit(lookups);
  }
}

/**
 * Runs `visit` over `items` with at most {@link PROC_SCAN_CONCURRENCY} at once, in order of
 * start, until `done()` says there is nothing left to look for.
 */
async function scan<T>(
  items: readonly T[],
  visit: (item: T) => Promise<void>,
  done: () => boolean,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length && !done()) await visit(items[next++] as T);
  };
  await Promise.all(Array.from({ length: PROC_SCAN_CONCURRENCY }, worker));
}

/**
 * One walk of `procRoot` for `batch`. Per socket, as a walk of its own would decide: held by this process
 * makes it `host` (the in-process client of an embedder or a test: nobody else can hold it
 * without us passing it); else any holder in another user or pid namespace makes it
 * `sandboxed` (every such process is looked at first); else the newest holder found in ours
 * makes it `host`. Lookups left unanswered are `unknown`.
 */
async function walkOwners(procRoot: string, batch: readonly Lookup[]): Promise<void> {
  const wanted = byQuery(batch);
  // Lookups whose callers gave up leave the walk; once none is left it stops.
  const prune = (): boolean => {
    for (const [target, lookups] of wanted) {
      const open = lookups.filter((lookup) => !lookup.settled);
      if (open.length === 0) wanted.delete(target);
      else if (open.length !== lookups.length) wanted.set(target, open);
    }
    return wanted.size === 0;
  };
  const settleAll = (lookups: Lookup[], owner: SocketOwner): void => {
    for (const lookup of lookups) lookup.answer(owner);
    wanted.delete(lookups[0]!.query);
  };

  await visitSocketLinks(procRoot, 'self', wanted, (lookups) =>
    settleAll(lookups, { kind: 'host', pid: process.pid }),
  );
  if (prune()) return;
  const own = await namespacesOf(procRoot, 'self');
  if (own === undefined) return;
  const self = String(process.pid);
  const pids = (await readdir(procRoot)).filter((name) => /^[0-9]+$/.test(name) && name !== self);
  const foreign: string[] = [];
  const ours: string[] = [];
  await scan(
    pids,
    async (pid) => {
      const ns = await namespacesOf(procRoot, pid);
      if (ns !== undefined) (ns.user === own.user && ns.pid === own.pid ? ours : foreign).push(pid);
    },
    prune,
  );
  // Newest first: a client is more often a recent process than init or a long-running daemon.
  const newestFirst = (a: string, b: string): number => Number(b) - Number(a);
  foreign.sort(newestFirst);
  ours.sort(newestFirst);
  await scan(
    foreign,
    (pid) =>
      visitSocketLinks(procRoot, pid, wanted, (lookups) =>
        settleAll(lookups, { kind: 'sandboxed', pid: Number(pid) }),
      ),
    prune,
  );
  // Settled as host only now: a socket held both inside a sandbox and outside is sandboxed.
  // Among our processes the newest holder is named, whichever of the concurrent reads ends first.
  const hostHolders = new Map<string, number>();
  await scan(
    ours,
    (pid) =>
      visitSocketLinks(procRoot, pid, wanted, (lookups) => {
        const target = lookups[0]!.query;
        hostHolders.set(target, Math.max(hostHolders.get(target) ?? 0, Number(pid)));
      }),
    () => prune() || [...wanted.keys()].every((target) => hostHolders.has(target)),
  );
  for (const [target, pid] of hostHolders) {
    const lookups = wanted.get(target);
    if (lookups !== undefined) settleAll(lookups, { kind: 'host', pid });
  }
}

/** The shared walks of each /proc root (one in production; tests may point at another). */
const walksByRoot = new Map<string, SharedWalks<string, SocketOwner>>();

/**
 * Finds the process holding socket `inode` and classifies it. Any holder in another user or pid
 * namespace than this process makes it `sandboxed` (checked first, over every such process);
 * otherwise a holder found in ours makes it `host` (this process is looked at first: the
 * in-process client of an embedder or a test). Lookups made together share one walk of /proc.
 * Throws when `signal` aborts or /proc cannot be listed.
 */
export function findSocketOwner(
  inode: number,
  signal: AbortSignal,
  procRoot: string = '/proc',
): Promise<SocketOwner> {
  let walks = walksByRoot.get(procRoot);
  if (walks === undefined) {
    walks = new SharedWalks<string, SocketOwner>((batch) => walkOwners(procRoot, batch), { kind: 'unknown' });
    walksByRoot.set(procRoot, walks);
  }
  return walks.ask(`socket:[${inode}]`, signal);
}
