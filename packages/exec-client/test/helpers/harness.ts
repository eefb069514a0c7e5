// Shared setup of the client suites: a real exec-server on 127.0.0.1:0 whose children are
// tracked (the kit's leak check after each test fails on a survivor), and clients/backends that
// close with `await using`.

import {
  defaultSpawner,
  LocalProcessTable,
  type LocalProcessTableOptions,
  type Spawner,
} from '@execd/exec-server';
import { type ExecServerOptions, type RunningExecServer, startExecServer } from '@execd/exec-server/server';
import type { CodecName } from '@execd/protocol';
import { ProcessTracker } from '@execd/test-kit';
import { ExecServerClient } from '../../src/exec-server-client.ts';
import { RemoteBackend } from '../../src/remote-backend.ts';

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
