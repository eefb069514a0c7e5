// Which process holds a socket (Linux): walks /proc/<pid>/fd for the link `socket:[inode]`, and
// tells whether that process runs in this server's user and pid namespaces or in others (a
// bubblewrap sandbox has its own of both). The walk runs in slices of the event loop
// (`proc-walk.ts`, where the rules are); lookups share walks (see shared-walks.ts): a walk
// reads every descriptor of every process, the server's own included (one per connection and
// child pipe), so a burst of N connections costs a couple of walks instead of N.
import { findOwners, runInSlices, type SocketOwner } from './proc-walk.ts';
import { byQuery, SharedWalks, type WalkQuestion } from './shared-walks.ts';

export type { SocketOwner } from './proc-walk.ts';

/** One walk of `procRoot` for `batch`; lookups it leaves unanswered are `unknown`. */
async function walkOwners(
  procRoot: string,
  batch: readonly WalkQuestion<string, SocketOwner>[],
): Promise<void> {
  const wanted = byQuery(batch);
  const owners = await runInSlices(
    findOwners({ procRoot, targets: [...wanted.keys()], selfPid: process.pid }),
    () => batch.every((question) => question.settled),
  );
  for (const [target, owner] of owners)
    for (const question of wanted.get(target) ?? []) question.answer(owner);
}

/** The shared walks of each /proc root (one in production; tests may point at another). */
const walksByRoot = new Map<string, SharedWalks<string, SocketOwner>>();

/**
 * Finds the process holding socket `inode` and classifies it. Any holder in another user or pid
 * namespace than this process makes it `sandboxed` (checked first, over every such process);
 * otherwise a holder found in ours makes it `host` (this process is looked at first: the
 * in-process client of an embedder or a test). Lookups made together share one walk of /proc.
 * Throws when `signal` aborts, or when the walk could not run or was given up.
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
