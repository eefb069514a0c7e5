#!/usr/bin/env node
// The `execd-server` command: parses flags, starts the server, prints its URL, shuts down on
// SIGTERM/SIGINT/SIGHUP (terminating every process tree) and exits 0.
import { AUTH_TOKEN_ENV_VAR, createJsonLineLogger, loadAuthToken, startExecServer } from '../server/index.ts';
import { parseCliArgs, USAGE } from './args.ts';

/**
 * Hard deadline for a signal-initiated shutdown. Process trees are killed with SIGKILL, so this
 * only trips if something is badly stuck; it keeps the promise to exit within 5 s.
 */
const SHUTDOWN_DEADLINE_MS = 4_500;

/** Exit status for bad usage (unknown flag, bad value), as most CLIs. */
const EXIT_USAGE = 2;

function fail(message: string, status: number): never {
  process.stderr.write(`execd-server: ${message}\n`);
  process.exit(status);
}

async function main(): Promise<void> {
  let args: ReturnType<typeof parseCliArgs>;
  try {
    args = parseCliArgs(process.argv.slice(2));
  } catch (error) {
    fail(`${(error as Error).message}\n\n${USAGE}`, EXIT_USAGE);
  }
  if (args.help) {
    process.stdout.write(USAGE);
    return;
  }
  const logger = createJsonLineLogger({ level: args.logLevel, write: (line) => process.stderr.write(line) });

  const authToken = await loadAuthToken({ tokenFile: args.authTokenFile, env: process.env });
  // Children must never inherit the token through the server's own environment.
  delete process.env[AUTH_TOKEN_ENV_VAR];

  const server = await startExecServer({
    ...(args.listen === undefined ? {} : { listen: args.listen }),
    ...(args.concurrentRequests === undefined ? {} : { concurrentRequests: args.concurrentRequests }),
    authToken,
    logger,
  });
  if (server.url !== 'stdio') process.stdout.write(`${server.url}\n`);

  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    logger.info('received signal; shutting down', { signal });
    const deadline = setTimeout(() => {
      logger.error('shutdown did not finish in time; exiting', { deadlineMs: SHUTDOWN_DEADLINE_MS });
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS);
    deadline.unref();
    void server.close().then(() => process.exit(0));
  };
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, stop);
  // Stdio mode ends when its one connection does (EOF): every process was terminated by then.
  void server.closed.then(() => {
    if (!stopping) process.exit(0);
  });
}

main().catch((error: unknown) => {
  fail(error instanceof Error ? error.message : String(error), 1);
});
