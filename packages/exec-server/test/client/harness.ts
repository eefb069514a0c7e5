// Shared setup of the client suites: a real exec-server on 127.0.0.1:0 whose children are
// tracked (afterEach checks none survives), and clients/backends that close with `await using`.
import type { CodecName } from '@execd/protocol';
import { ExecServerClient } from '../../src/client/exec-server-client.ts';
import { RemoteBackend } from '../../src/client/remote-backend.ts';
import { defaultSpawner } from '../../src/local/default-spawner.ts';
import { LocalProcessTable, type LocalProcessTableOptions } from '../../src/local/local-process-table.ts';
import type { Spawner } from '../../src/local/spawner.ts';
import { type ExecServerOptions, type RunningExecServer, startExecServer } from '../../src/server/index.ts';
import { ProcessTracker } from '../helpers/process-tracker.ts';
import { waitFor } from '../helpers/wait-for.ts';

/** Records every child the test servers launch. */
export const tracker: ProcessTracker = new ProcessTracker();

const trackingSpawner: Spawner = async (request) => {
  const launched = await defaultSpawner(request);
  tracker.add(launched.process.pid);
  return launched;
};

/**
 * A real server whose sessions use tracked LocalProcessTables (with `table` options); their
 * `network/policyRequest`s go to the session's client, as with the server's default tables.
 */
export function startTrackedServer(
  options: ExecServerOptions = {},
  table: LocalProcessTableOptions = {},
): Promise<RunningExecServer> {
  return startExecServer({
    listen: 'ws://127.0.0.1:0',
    createProcessTable: (context) =>
      new LocalProcessTable({
        spawner: trackingSpawner,
        exitedRetentionMs: 2000,
        networkPolicyRequester: context.requestNetworkPolicy,
        ...table,
      }),
    ...options,
  });
}

/** Short recovery timings for tests (the defaults are tens of seconds). */
export const FAST_RECOVERY = {
  recoveryTimeoutMs: 10_000,
  recoveryInitialDelayMs: 20,
  recoveryMaxDelayMs: 200,
} as const;

/** A RemoteBackend whose `close()` also stops the server it runs against. */
export async function remoteBackendWithServer(codec: CodecName): Promise<RemoteBackend> {
  const server = await startTrackedServer();
  let client: ExecServerClient;
  try {
    client = await ExecServerClient.connect({ url: server.url, codec, ...FAST_RECOVERY });
  } catch (error) {
    await server.close();
    throw error;
  }
  const backend = new RemoteBackend(client);
  const close = backend.close.bind(backend);
  return Object.assign(backend, {
    close: async () => {
      try {
        await close();
      } finally {
        await server.close();
      }
    },
    [Symbol.asyncDispose]: async () => {
      await backend.close();
    },
  });
}

/** Sockets and servers this process holds open (a test must leave none behind). */
function openNetworkHandles(): string[] {
  return process
    .getActiveResourcesInfo()
    .filter((kind) => kind === 'TCPSocketWrap' || kind === 'TCPServerWrap');
}

/** Waits (bounded) until every TCP socket and server of the test is closed. */
export async function expectNoOpenSockets(): Promise<void> {
  await waitFor(() => openNetworkHandles().length === 0, {
    timeoutMs: 5_000,
    what: 'every socket and server to be closed',
  }).catch((error: unknown) => {
    throw new Error(`handles left open: ${openNetworkHandles().join(', ')}`, { cause: error });
  });
}
