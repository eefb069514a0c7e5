import { waitFor } from './wait-for.ts';

const SOCKET_RESOURCES = new Set(['TCPServerWrap', 'TCPSocketWrap', 'TCPWRAP', 'TCPSERVERWRAP']);

/** Open TCP servers and sockets in this process (Node's active resources). */
export function openSockets(): string[] {
  return process.getActiveResourcesInfo().filter((name) => SOCKET_RESOURCES.has(name));
}

/** Waits (bounded) until no TCP server or socket is open; throws naming what leaked. */
export async function expectNoOpenSockets(): Promise<void> {
  try {
    await waitFor(() => openSockets().length === 0, { timeoutMs: 5_000, what: 'sockets to close' });
  } catch (error) {
    throw new Error(`sockets leaked by the test: ${openSockets().join(', ')}`, { cause: error });
  }
}
