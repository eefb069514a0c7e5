// Starts real exec-servers on 127.0.0.1:0 for server tests, with `await using` cleanup.
import { type ExecServerOptions, type RunningExecServer, startExecServer } from '../../src/server/index.ts';
import { FakeProcessTable } from './fake-process-table.ts';

/** A running test server and the fake tables it created (when `fake` was asked for). */
export interface TestServer extends AsyncDisposable {
  readonly url: string;
  readonly server: RunningExecServer;
  /** One per session, in creation order (fake tables only). */
  readonly tables: FakeProcessTable[];
  close(): Promise<void>;
}

/**
 * Starts a server on `ws://127.0.0.1:0`. With `fake: true` every session gets a
 * {@link FakeProcessTable}; otherwise the server's default (real) process table.
 */
export async function startTestServer(
  options: ExecServerOptions & { readonly fake?: boolean } = {},
): Promise<TestServer> {
  const tables: FakeProcessTable[] = [];
  const { fake, ...rest } = options;
  const server = await startExecServer({
    listen: 'ws://127.0.0.1:0',
    ...(fake
      ? {
          createProcessTable: () => {
            const table = new FakeProcessTable();
            tables.push(table);
            return table;
          },
        }
      : {}),
    ...rest,
  });
  const close = (): Promise<void> => server.close();
  return { url: server.url, server, tables, close, [Symbol.asyncDispose]: close };
}
