// Loaded by vitest before every test file (vitest.config.ts `setupFiles`): after the file's tests,
// nothing they started may still run: no child process of this worker (but the exec-server's
// orphan-guard watchdog, which lives as long as the worker), no TCP server or socket.
import { readFileSync } from 'node:fs';
import { afterAll } from 'vitest';
import { descendants } from './procfs.ts';
import { waitFor } from './wait-for.ts';

const SOCKET_RESOURCES = new Set(['TCPServerWrap', 'TCPSocketWrap', 'TCPWRAP', 'TCPSERVERWRAP']);

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
  } catch {
    return '';
  }
}

/** The exec-server's watchdog (one per process that spawned children; see orphan-guard.ts). */
function isWatchdog(pid: number): boolean {
  return /^\/bin\/sh -c trap '' HUP INT TERM PIPE/.test(cmdline(pid));
}

function leftovers(): string[] {
  return descendants(process.pid)
    .filter((stat) => stat.state !== 'Z' && !isWatchdog(stat.pid))
    .map((stat) => `${stat.pid} ${cmdline(stat.pid).slice(0, 120)}`);
}

afterAll(async () => {
  try {
    await waitFor(() => leftovers().length === 0, { timeoutMs: 15_000, what: 'child processes to exit' });
  } catch (error) {
    throw new Error(`processes outlived the test file:\n${leftovers().join('\n')}`, { cause: error });
  }
  const sockets = (): string[] =>
    process.getActiveResourcesInfo().filter((name) => SOCKET_RESOURCES.has(name));
  try {
    await waitFor(() => sockets().length === 0, { timeoutMs: 10_000, what: 'sockets to close' });
  } catch (error) {
    throw new Error(`sockets outlived the test file: ${sockets().join(', ')}`, { cause: error });
  }
});
