// Finds the socket inode of a TCP connection's other end in /proc/net/tcp and /proc/net/tcp6
// (Linux). Both ends of a connection made inside this network namespace are listed there; the
// end we look for is the one whose local address is our peer's and whose remote is our own.
import { open } from 'node:fs/promises';
import { isIPv4, isIPv6 } from 'node:net';
import { endianness } from 'node:os';
import { byQuery, SharedWalks, type WalkQuestion } from './shared-walks.ts';

/** A TCP endpoint: an address as Node reports it (`127.0.0.1`, `::ffff:127.0.0.1`, `::1`) and a port. */
export interface TcpEndpoint {
  readonly address: string;
  readonly port: number;
}

/** One row of /proc/net/tcp{,6}: both endpoints as 32-hex-digit IPv6 keys, and the inode. */
export interface ProcNetTcpRow {
  readonly local: string;
  readonly localPort: number;
  readonly remote: string;
  readonly remotePort: number;
  /** 0 for TIME_WAIT rows, which no process holds any more. */
  readonly inode: number;
}

/**
 * Bound on the bytes read from each table (about 150 bytes a row: some 200,000 sockets). Past it
 * the search throws: the connection cannot be attributed.
 */
export const PROC_NET_TCP_MAX_BYTES: number = 32 * 1024 * 1024;

const READ_CHUNK_BYTES = 64 * 1024;
const IPV4_MAPPED_PREFIX = '00000000000000000000ffff';

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

/**
 * Converts a /proc address field (`0100007F` or 32 hex digits) to an {@link addressKey}. The
 * kernel prints each 32-bit word of the address in host byte order.
 */
function procAddressKey(field: string, littleEndian: boolean): string | undefined {
  if (field.length !== 8 && field.length !== 32) return undefined;
  let key = '';
  for (let word = 0; word < field.length; word += 8) {
    const bytes = field.slice(word, word + 8).toLowerCase();
    key += littleEndian
      ? bytes.slice(6, 8) + bytes.slice(4, 6) + bytes.slice(2, 4) + bytes.slice(0, 2)
      : bytes;
  }
  return field.length === 8 ? IPV4_MAPPED_PREFIX + key : key;
}

/** Parses one row (`sl local rem st ... uid timeout inode ...`); undefined for the header and junk. */
export function parseProcNetTcpRow(
  line: string,
  littleEndian: boolean = endianness() === 'LE',
): ProcNetTcpRow | undefined {
  const fields = line.trim().split(/\s+/);
  if (fields.length < 10 || !fields[0]?.endsWith(':')) return undefined;
  const [localField = '', localPortField = ''] = (fields[1] ?? '').split(':');
  const [remoteField = '', remotePortField = ''] = (fields[2] ?? '').split(':');
  const local = procAddressKey(localField, littleEndian);
  const remote = procAddressKey(remoteField, littleEndian);
  const inode = Number(fields[9]);
  const isPort = (field: string): boolean => /^[0-9A-Fa-f]{4}$/.test(field);
  if (local === undefined || remote === undefined || !Number.isSafeInteger(inode)) return undefined;
  if (!isPort(localPortField) || !isPort(remotePortField)) return undefined;
  return {
    local,
    localPort: Number.parseInt(localPortField, 16),
    remote,
    remotePort: Number.parseInt(remotePortField, 16),
    inode,
  };
}

/** Yields the lines of a /proc file, reading at most `maxBytes` (throws past that) until `stop()`. */
async function* procLines(path: string, maxBytes: number, stop: () => boolean): AsyncGenerator<string> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(READ_CHUNK_BYTES);
    let rest = '';
    let total = 0;
    while (!stop()) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > maxBytes) throw new Error(`${path} is larger than ${maxBytes} bytes`);
      const lines = (rest + buffer.toString('latin1', 0, bytesRead)).split('\n');
      rest = lines.pop() ?? '';
      yield* lines;
    }
    if (rest !== '' && !stop()) yield rest;
  } finally {
    await handle.close();
  }
}

/** A row's identity: its local endpoint, then its remote one (both as address keys). */
function rowKey(local: string, localPort: number, remote: string, remotePort: number): string {
  return `${local}.${localPort}>${remote}.${remotePort}`;
}

/**
 * One read of the tables for every connection asked about (see shared-walks.ts): a burst of
 * connections reads and parses /proc/net/tcp (a row per socket of the namespace) a couple of
 * times instead of once per connection.
 */
async function readTables(
  procRoot: string,
  questions: readonly WalkQuestion<string, number | undefined>[],
): Promise<void> {
  const wanted = byQuery(questions);
  const done = (): boolean => questions.every((question) => question.settled);
  for (const table of ['tcp', 'tcp6']) {
    try {
      for await (const line of procLines(`${procRoot}/net/${table}`, PROC_NET_TCP_MAX_BYTES, done)) {
        const row = parseProcNetTcpRow(line);
        if (row === undefined || row.inode === 0) continue;
        const found = wanted.get(rowKey(row.local, row.localPort, row.remote, row.remotePort));
        for (const question of found ?? []) question.answer(row.inode);
      }
    } catch (error) {
      // A missing tcp6 table (IPv6 disabled) just has no rows; anything else (an oversized
      // table) means the question has no answer, which the caller must not read as "remote".
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
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
