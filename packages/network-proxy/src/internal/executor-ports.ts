import { subscribe } from 'node:diagnostics_channel';
import { readdir, readFile, readlink } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { isLocalAddress } from './local-address.ts';

/**
 * How long a scan of the executor's listening ports is reused. A listener opened through Node's
 * `net` module (every http/ws server) invalidates it at once (the `net.server.listen` tracing
 * channel), so the TTL only bounds how late a listener opened some other way (a native addon, a
 * worker thread) is noticed. One scan costs a few ms of `/proc` reads; this keeps local-destination
 * requests (loopbackPorts) from paying it each time.
 */
export const EXECUTOR_PORTS_CACHE_MS = 1_000;

/** Tracing channels Node publishes on around `net.Server.listen()` (Node >= 20.16 / 22.3). */
const LISTEN_CHANNELS: readonly string[] = [
  'tracing:net.server.listen:asyncStart',
  'tracing:net.server.listen:asyncEnd',
];

/** `/proc/net/tcp{,6}` state of a listening socket. */
const TCP_LISTEN = '0A';

/** Ports of listening sockets in one `/proc/net/tcp{,6}` table, by socket inode. */
export function parseListeningSockets(table: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of table.split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...
    const [, local, , state, , , , , , inode] = fields;
    if (state !== TCP_LISTEN || local === undefined || inode === undefined || inode === '0') continue;
    out.set(inode, Number.parseInt(local.slice(local.lastIndexOf(':') + 1), 16));
  }
  return out;
}

/** Inodes of the sockets this process holds open (`/proc/self/fd/N -> socket:[inode]`). */
async function ownSocketInodes(): Promise<Set<string>> {
  const fds = await readdir('/proc/self/fd').catch(() => [] as string[]);
  const links = await Promise.all(fds.map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')));
  const inodes = new Set<string>();
  for (const link of links) {
    const match = /^socket:\[(\d+)\]$/.exec(link);
    if (match?.[1]) inodes.add(match[1]);
  }
  return inodes;
}

/** The TCP ports this process (the executor) listens on right now, on any address. */
export async function scanExecutorPorts(): Promise<ReadonlySet<number>> {
  const [inodes, tcp4, tcp6] = await Promise.all([
    ownSocketInodes(),
    readFile('/proc/self/net/tcp', 'latin1').catch(() => ''),
    readFile('/proc/self/net/tcp6', 'latin1').catch(() => ''),
  ]);
  const ports = new Set<number>();
  for (const table of [tcp4, tcp6]) {
    for (const [inode, port] of parseListeningSockets(table)) if (inodes.has(inode)) ports.add(port);
  }
  return ports;
}

interface Scan {
  readonly startedAt: number;
  /** `listenGeneration` when the scan started; a listen since then makes its negatives stale. */
  readonly generation: number;
  readonly ports: Promise<ReadonlySet<number>>;
}

let latest: Scan | undefined;
let listenGeneration = 0;
let watching = false;

/** Counts every `listen()` in this thread from the first check on (subscribed lazily, once). */
function watchListens(): void {
  if (watching) return;
  watching = true;
  const bump = (): void => {
    listenGeneration++;
  };
  for (const name of LISTEN_CHANNELS) subscribe(name, bump);
}

function startScan(): Scan {
  const scan = { startedAt: performance.now(), generation: listenGeneration, ports: scanExecutorPorts() };
  latest = scan;
  return scan;
}

const isRecent = (scan: Scan | undefined): scan is Scan =>
  scan !== undefined && performance.now() - scan.startedAt < EXECUTOR_PORTS_CACHE_MS;

/**
 * True when this process listens on TCP `port`. Async (`/proc` reads, no blocking call). A recent
 * scan answers (a port it saw, or any port if nothing listened since it started); otherwise a new
 * scan decides, shared by concurrent callers.
 */
export async function isExecutorPort(port: number): Promise<boolean> {
  watchListens();
  const recent = isRecent(latest) ? latest : undefined;
  if (recent !== undefined) {
    const ports = await recent.ports;
    if (ports.has(port)) return true;
    if (recent.generation === listenGeneration && isRecent(recent)) return false;
  }
  const reusable = isRecent(latest) && latest !== recent && latest.generation === listenGeneration;
  return (await (reusable && latest ? latest : startScan()).ports).has(port);
}

/**
 * The local address among `addresses` that would reach one of the executor's own listening ports
 * (or one of `reservedPorts`) on `port`, or undefined when none does.
 */
export async function executorPortTarget(
  addresses: readonly string[],
  port: number,
  reservedPorts: ReadonlySet<number>,
): Promise<string | undefined> {
  const local = addresses.find(isLocalAddress);
  if (local === undefined) return undefined;
  if (reservedPorts.has(port) || (await isExecutorPort(port))) return local;
  return undefined;
}
