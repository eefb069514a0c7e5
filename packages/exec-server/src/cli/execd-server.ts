#!/usr/bin/env node
// The `execd-server` command: parses flags, starts the server, prints its URL, shuts down on
// SIGTERM/SIGINT/SIGHUP (terminating every process tree) and exits 0.
import { fstatSync } from 'node:fs';
import { Socket } from 'node:net';
import { resolve } from 'node:path';
import { closeInheritedDescriptors, ForkServer } from '@execd/pty-utils';
import { PreparedSandboxes } from '@execd/sandboxing';
import packageJson from '../../package.json' with { type: 'json' };
import { guardSpawned } from '../local/index.ts';
import {
  AUTH_TOKEN_ENV_VAR,
  createJsonLineLogger,
  installHeapPolicy,
  loadAuthToken,
  startExecServer,
  startReverseExecServer,
} from '../server/index.ts';
import { parseCliArgs, USAGE } from './args.ts';
import { dropLauncherEnv } from './launcher-env.ts';
import { sandboxReadiness } from './sandbox-readiness.ts';

/**
 * Hard deadline for a signal-initiated shutdown. Process trees are killed with SIGKILL, so this
 * only trips if something is badly stuck; it keeps the promise to exit within 5 s.
 */
const SHUTDOWN_DEADLINE_MS = 4_500;

/** Exit status for bad usage (unknown flag, bad value), as most CLIs. */
const EXIT_USAGE = 2;

/** Bound on flushing the last stdio responses before exiting. */
const STDOUT_FLUSH_TIMEOUT_MS = 1_000;

/**
 * The stdio transport's output. Node writes `process.stdout` synchronously when it is a pipe, so
 * a client that stops reading would block the whole server; a non-blocking socket on fd 1 queues
 * instead, which lets the notification gate see the backlog and hold the session's output back.
 */
function stdioOutput(): NodeJS.WritableStream & { end(callback?: () => void): unknown } {
  try {
    const stat = fstatSync(1);
    if (stat.isFIFO() || stat.isSocket()) return new Socket({ fd: 1, readable: false, writable: true });
  } catch {
    // Fall back to process.stdout below.
  }
  return process.stdout;
}

function flush(stream: NodeJS.WritableStream & { end(callback?: () => void): unknown }): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, STDOUT_FLUSH_TIMEOUT_MS);
    stream.end(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

function fail(message: string, status: number): never {
  process.stderr.write(`execd-server: ${message}\n`);
  process.exit(status);
}

async function main(): Promise<void> {
  // glibc has read the launcher's tunables by now; commands inherit none of them.
  dropLauncherEnv(process.env);
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
  if (args.version) {
    process.stdout.write(`execd-server ${packageJson.version}\n`);
    return;
  }
  const logger = createJsonLineLogger({ level: args.logLevel, write: (line) => process.stderr.write(line) });
  // Signals are caught before anything is announced: whoever reads the URL may signal at once,
  // and one arriving while the server starts stops it as soon as it is up.
  let stopping: NodeJS.Signals | undefined;
  let stopServer: (() => void) | undefined;
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const)
    process.on(signal, () => {
      if (stopping !== undefined) return;
      stopping = signal;
      logger.info('received signal; shutting down', { signal });
      const deadline = setTimeout(() => {
        logger.error('shutdown did not finish in time; exiting', { deadlineMs: SHUTDOWN_DEADLINE_MS });
        process.exit(1);
      }, SHUTDOWN_DEADLINE_MS);
      deadline.unref();
      stopServer?.();
    });
  // A server reads frames from peers it does not trust: keep V8 from growing on their garbage.
  installHeapPolicy({ logger });

  const authToken = await loadAuthToken({ tokenFile: args.authTokenFile, env: process.env });
  // Children must never inherit the token through the server's own environment.
  delete process.env[AUTH_TOKEN_ENV_VAR];
  const connectToken =
    args.connect === undefined
      ? undefined
      : await loadAuthToken({ tokenFile: args.connectTokenFile, flag: '--connect-token-file' });
  // Nor what the server's parent left open across exec (the token files are read by now).
  const closedDescriptors = closeInheritedDescriptors();
  if (closedDescriptors.length > 0) logger.debug('closed inherited descriptors', { fds: closedDescriptors });

  const isStdio = args.listen === 'stdio' || args.listen === 'stdio://';
  const output = isStdio ? stdioOutput() : process.stdout;
  // The token file reads as empty in every sandbox (a root sandbox could read a 0600 file).
  const hiddenTokenFiles = [args.authTokenFile, args.connectTokenFile].flatMap((file) =>
    file === undefined ? [] : [resolve(file)],
  );
  // Closed after the server (which ends every command first).
  const forkServer = args.forkServer ? await ForkServer.start({ logger }) : undefined;
  if (args.forkServer && forkServer === undefined)
    logger.info('no fork server here: the server forks commands');
  const preparedSandboxes = args.prepareSandboxes
    ? new PreparedSandboxes({ onStarted: guardSpawned, logger })
    : undefined;
  const processTable = {
    processTable: {
      ...(hiddenTokenFiles.length === 0 ? {} : { sandboxHiddenPaths: hiddenTokenFiles }),
      ...(preparedSandboxes === undefined ? {} : { preparedSandboxes }),
      ...(forkServer === undefined ? {} : { forkServer }),
    },
  };
  const reverse =
    args.connect === undefined
      ? undefined
      : await startReverseExecServer({
          connect: args.connect,
          connectToken,
          environmentId: args.environmentId,
          healthListen: args.healthListen,
          authToken,
          allowedHosts: args.allowedHosts,
          ...(args.localPeerCheck === undefined ? {} : { localPeerCheck: args.localPeerCheck }),
          ...(args.requireSandbox ? { readiness: sandboxReadiness(logger) } : {}),
          ...(args.concurrentRequests === undefined ? {} : { concurrentRequests: args.concurrentRequests }),
          ...processTable,
          logger,
        });
  const server =
    reverse ??
    (await startExecServer({
      ...(args.listen === undefined ? {} : { listen: args.listen }),
      ...(isStdio ? { stdio: { input: process.stdin, output } } : {}),
      ...(args.concurrentRequests === undefined ? {} : { concurrentRequests: args.concurrentRequests }),
      authToken,
      allowedHosts: args.allowedHosts,
      ...(args.localPeerCheck === undefined ? {} : { localPeerCheck: args.localPeerCheck }),
      ...processTable,
      ...(args.requireSandbox ? { readiness: sandboxReadiness(logger) } : {}),
      logger,
    }));
  stopServer = () =>
    void server
      .close()
      .then(() => preparedSandboxes?.close())
      .then(() => forkServer?.close())
      .then(() => (isStdio ? flush(output) : undefined))
      .then(() => process.exit(0));
  if (stopping !== undefined) {
    stopServer();
    return;
  }
  if (server.url !== 'stdio' && args.connect === undefined) process.stdout.write(`${server.url}\n`);
  // Stdio mode ends when its one connection does (EOF): every process was terminated by then.
  void server.closed.then(async () => {
    if (stopping !== undefined) return;
    await preparedSandboxes?.close();
    await forkServer?.close();
    if (isStdio) await flush(output);
    process.exit(0);
  });
}

main().catch((error: unknown) => {
  fail(error instanceof Error ? error.message : String(error), 1);
});
