// Helpers of the managed-network (`proxied`) tests: local origin servers, requests through a
// proxy's Unix socket, and checks that no proxy listener or bridge process is left behind.
import { type IncomingHttpHeaders, request } from 'node:http';
import { createStaticResolver, type NetworkResolver } from '@execd/network-proxy';
import { fromUtf8 } from '@execd/protocol';
import { cmdline, descendants, waitFor } from '@execd/test-kit';

// Origins live in a child process: the proxy never connects to its executor's (this process's) ports.
export { type Origin, startOrigin } from '@execd/test-kit';

/** Maps the test names to 127.0.0.1 (like `--add-host`); the real network is never used. */
export const TEST_RESOLVER: NetworkResolver = createStaticResolver({
  'allowed.test': '127.0.0.1',
  'denied.test': '127.0.0.1',
  'ask.test': '127.0.0.1',
  'unknown.test': '127.0.0.1',
});

/** The answer to one request sent through a proxy. */
export interface ProxiedResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** `GET url` through the HTTP proxy listening on `socketPath` (what a command's curl does). */
export function getThroughProxy(socketPath: string, url: string): Promise<ProxiedResponse> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const req = request({ socketPath, method: 'GET', path: url, headers: { host: target.host } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: fromUtf8(Buffer.concat(chunks)) }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Listening Unix-socket servers of this process (each proxy has two). */
export function listeningPipes(): number {
  return process.getActiveResourcesInfo().filter((name) => name === 'PipeServerWrap').length;
}

/**
 * Waits (bounded) until no bridge process and no proxy listener of this process is left: what a
 * test asserts right after a proxied process closed (the kit's leak check runs only after it).
 */
export async function expectNoNetworkLeftovers(pipesBefore: number): Promise<void> {
  const bridges = (): string[] =>
    descendants(process.pid)
      .filter((stat) => stat.state !== 'Z')
      .map((stat) => cmdline(stat.pid))
      .filter((line) => line.includes('bridge'));
  try {
    await waitFor(() => bridges().length === 0 && listeningPipes() <= pipesBefore, {
      what: 'bridges and proxy listeners to go away',
    });
  } catch (error) {
    throw new Error(`left behind: bridges [${bridges().join('; ')}], listeners ${listeningPipes()}`, {
      cause: error,
    });
  }
}
