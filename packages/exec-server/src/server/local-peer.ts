// Refuses connections made from inside a sandbox (security review): with the network on, a
// sandboxed command shares the host's network namespace and can reach 127.0.0.1:PORT, where an
// exec-server without a token would start unsandboxed processes for it. The server therefore
// asks, for each connection, which process made it (Linux /proc), and refuses sandboxed ones.
import type { Socket } from 'node:net';
import { isLoopbackAddress } from './listen-url.ts';
import { findPeerSocketInode } from './proc-net-tcp.ts';
import { findSocketOwner } from './socket-owner.ts';

/**
 * What the server does with a connection from this machine (`ExecServerOptions.localPeerCheck`):
 *
 * - `sandboxed-only` (default): refuse a peer positively found in a sandbox. A sandbox of this
 *   server always lives in a pid namespace below the server's, so its processes are always
 *   found; peers this server cannot see (a sidecar container of the same pod, host processes
 *   when the server runs in a container with the host's network) are served. A walk that does
 *   not finish within its deadline is refused, as in `strict`;
 * - `strict`: also refuse a loopback peer whose process cannot be found (it exited, or runs in a
 *   pid namespace this server cannot see), for hosts where every client is visible;
 * - `off`: no check (what the original does).
 */
export type LocalPeerCheck = 'strict' | 'sandboxed-only' | 'off';

/** The answer for one connection. */
export type PeerVerdict =
  | {
      readonly allowed: true;
      /** `remote`: not from this network namespace; `host`: a process outside any sandbox. */
      readonly peer: 'remote' | 'host' | 'unchecked' | 'unattributed';
      readonly pid?: number | undefined;
    }
  | {
      readonly allowed: false;
      readonly peer: 'sandboxed' | 'unattributed';
      readonly pid?: number | undefined;
    };

/**
 * Upper bound on attributing one connection (reading /proc/net/tcp{,6} and walking /proc). Past
 * it a loopback connection is refused, in every mode. A walk takes milliseconds on an idle
 * machine and far longer on a loaded one with many processes; a slow upgrade is better than a
 * refused client.
 */
export const PEER_ATTRIBUTION_TIMEOUT_MS = 5_000;

/** Options of {@link checkLocalPeer}. */
export interface CheckLocalPeerOptions {
  readonly mode: LocalPeerCheck;
  /** Default {@link PEER_ATTRIBUTION_TIMEOUT_MS}. */
  readonly timeoutMs?: number | undefined;
  /** Default `process.platform`: anything but `linux` is not checked. */
  readonly platform?: NodeJS.Platform | undefined;
}

/**
 * Decides whether the peer of an accepted TCP `socket` may be served. Never throws.
 *
 * Why fail closed for loopback: a loopback connection always comes from this network namespace,
 * so its other end is in /proc/net/tcp and some process holds it; when that cannot be shown
 * (the holder exited, the walk timed out, the tables could not be read) the server cannot tell
 * a host client from a sandbox, and letting a sandbox through is the escape this check exists to
 * stop. A host client in the server's own namespaces is always found, so it always works. A
 * peer on a non-loopback address that is not in our tables is a remote host (allowed; a
 * non-loopback listener requires the auth token anyway); one that is, is attributed as above.
 */
export async function checkLocalPeer(socket: Socket, options: CheckLocalPeerOptions): Promise<PeerVerdict> {
  if (options.mode === 'off' || (options.platform ?? process.platform) !== 'linux') {
    return { allowed: true, peer: 'unchecked' };
  }
  const { remoteAddress, remotePort, localAddress, localPort } = socket;
  const strict = options.mode === 'strict';
  if (
    remoteAddress === undefined ||
    remotePort === undefined ||
    localAddress === undefined ||
    localPort === undefined
  ) {
    // Already closed: nothing will be served on it anyway.
    return { allowed: false, peer: 'unattributed' };
  }
  const loopback = isLoopbackAddress(remoteAddress);
  const unattributed: PeerVerdict = strict
    ? { allowed: false, peer: 'unattributed' }
    : { allowed: true, peer: 'unattributed' };
  // A walk that did not finish (the deadline passed, /proc could not be read) proves nothing: a
  // sandboxed command can make it slow on purpose (thousands of descriptors in processes newer
  // than the one that connects). Refused in every mode.
  const incomplete: PeerVerdict = { allowed: false, peer: 'unattributed' };
  const timeoutMs = options.timeoutMs ?? PEER_ATTRIBUTION_TIMEOUT_MS;
  // No time at all: past already (a timer of 0 ms would still let a fast walk finish first).
  const signal =
    timeoutMs <= 0
      ? AbortSignal.abort(new Error('no time to attribute the connection'))
      : AbortSignal.timeout(timeoutMs);
  let inode: number | undefined;
  try {
    inode = await findPeerSocketInode(
      { address: remoteAddress, port: remotePort },
      { address: localAddress, port: localPort },
      signal,
    );
  } catch {
    return loopback ? incomplete : { allowed: true, peer: 'remote' };
  }
  if (inode === undefined) return loopback ? unattributed : { allowed: true, peer: 'remote' };
  let owner: Awaited<ReturnType<typeof findSocketOwner>>;
  try {
    owner = await findSocketOwner(inode, signal);
  } catch {
    return incomplete;
  }
  if (owner.kind === 'sandboxed') return { allowed: false, peer: 'sandboxed', pid: owner.pid };
  if (owner.kind === 'host') return { allowed: true, peer: 'host', pid: owner.pid };
  return unattributed;
}
