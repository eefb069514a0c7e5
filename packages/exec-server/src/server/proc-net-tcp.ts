// Finds the socket inode of a TCP connection's other end in /proc/net/tcp and /proc/net/tcp6
// (Linux). Both ends of a connection made inside this network namespace are listed there; the
// end we look for is the one whose local address is our peer's and whose remote is our own.
import { isIPv4, isIPv6 } from 'node:net';
import { endianness } from 'node:os';
import { findRows, IPV4_MAPPED_PREFIX } from './proc-walk.ts';
import { byQuery, SharedWalks, type WalkQuestion } from './shared-walks.ts';

/** A TCP endpoint: an address as Node reports it (`127.0.0.1`, `::ffff:127.0.0.1`, `::1`) and a port. */
export interface TcpEndpoint {
  readonly address: string;
  readonly port: number;
}

/**
 * Bound on the bytes read from each table (about 150 bytes a row: some 200,000 sockets). Past it
 * the search throws: the connection cannot be attributed.
 */
export const PROC_NET_TCP_MAX_BYTES: number = 32 * 1024 * 1024;

function hex2(byte: number): string {
  return byte.toString(16).padStart(2, '0');
}

/**
 * An address as 32 lowercase hex digits of its IPv6 form (IPv4 as `::ffff:a.b.c.d`), so that the
 * IPv4 row of a client and the IPv4-mapped address a dual-stack server sees compare equal.
 */
export function addressKey(address: string): string | undefined {
  const bare = address.split('%')[0] ?? '';
  if (isIPv4(bare))
    return (
      IPV4_MAPPED_PREFIX +
      bare
        .split('.')
        .map((part) => hex2(Number(part)))
        .join('')
    );
  if (!isIPv6(bare)) return undefined;
  let text = bare.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1] !== undefined) {
    const [a, b, c, d] = dotted[1].split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${hex2(a)}${hex2(b)}:${hex2(c)}${hex2(d)}`;
  }
  const [head = '', tail] = text.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const zeros = tail === undefined ? 0 : 8 - headGroups.length - tailGroups.length;
  const groups = [...headGroups, ...Array<string>(zeros).fill('0'), ...tailGroups];
  if (groups.length !== 8) return undefined;
  return groups.map((group) => group.padStart(4, '0')).join('');
}

/** A row's identity: its local endpoint, then its remote one (both as address keys). */
function rowKey(local: string, localPort: number, remote: string, remotePort: number): string {
  return `${local}.${localPort}>${remote}.${remotePort}`;
}

/**
 * One read of the tables for every connection asked about (see shared-walks.ts; proc-walk.ts
 * reads and matches the rows): a burst of connections reads /proc/net/tcp (a row per socket of the
 * namespace) a couple of times instead of once per connection.
 */
async function readTables(
  procRoot: string,
  questions: readonly WalkQuestion<string, number | undefined>[],
): Promise<void> {
  const wanted = byQuery(questions);
  const inodes = await findRows({
    procRoot,
    keys: [...wanted.keys()],
    maxBytes: PROC_NET_TCP_MAX_BYTES,
    littleEndian: endianness() === 'LE',
    abandoned: () => questions.every((question) => question.settled),
  });
  for (const [key, inode] of inodes) for (const question of wanted.get(key) ?? []) question.answer(inode);
}

const readsByRoot = new Map<string, SharedWalks<string, number | undefined>>();

/**
 * The inode of the socket at the other end of a connection (`peer` → `self`) if it belongs to
 * this network namespace, else undefined (a remote peer, or a socket already closed). Reads
 * /proc/net/tcp then /proc/net/tcp6, bounded by {@link PROC_NET_TCP_MAX_BYTES} each (throws
 * past it) and by `signal`; questions asked together share one read.
 */
export async function findPeerSocketInode(
  peer: TcpEndpoint,
  self: TcpEndpoint,
  signal: AbortSignal,
  procRoot: string = '/proc',
): Promise<number | undefined> {
  const peerKey = addressKey(peer.address);
  const selfKey = addressKey(self.address);
  if (peerKey === undefined || selfKey === undefined) return undefined;
  let reads = readsByRoot.get(procRoot);
  if (reads === undefined) {
    reads = new SharedWalks<string, number | undefined>(
      (questions) => readTables(procRoot, questions),
      undefined,
    );
    readsByRoot.set(procRoot, reads);
  }
  // The peer's own row: its local endpoint is the peer, its remote one is us.
  return reads.ask(rowKey(peerKey, peer.port, selfKey, self.port), signal);
}
