// Starts real exec-servers on 127.0.0.1:0 for server tests, with `await using` cleanup.
import type { LogFields, Logger } from '../../src/internal/logger.ts';
import { type ExecServerOptions, type RunningExecServer, startExecServer } from '../../src/server/index.ts';
import { FakeProcessTable } from './fake-process-table.ts';

/** One captured log record. */
export interface LogRecord {
  readonly level: string;
  readonly message: string;
  readonly fields: LogFields | undefined;
}

/** A Logger that records everything (for asserting that something was logged). */
export function captureLogger(): { readonly logger: Logger; readonly records: LogRecord[] } {
  const records: LogRecord[] = [];
  const at =
    (level: string) =>
    (message: string, fields?: LogFields): void => {
      records.push({ level, message, fields });
    };
  return {
    records,
    logger: {
      trace: at('trace'),
      debug: at('debug'),
      info: at('info'),
      warn: at('warn'),
      error: at('error'),
    },
  };
}

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
