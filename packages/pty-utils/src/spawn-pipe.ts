import { type ChildProcess, type StdioOptions, spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { ExecError, type Logger, NOOP_LOGGER } from '@execd/protocol';
import { DEFAULT_DRAIN_TIMEOUT_MS } from './constants.ts';
import { type ResolvedSpawn, resolveSpawn } from './executables/resolve-program.ts';
import { toExitStatus } from './exit-status.ts';
import type { ForkServer } from './fork-server/fork-server.ts';
import { ChildHandle, type StdinPort } from './internal/child-handle.ts';
import { forkJoiningCgroups } from './internal/thread-cgroup.ts';
import { stdinClosedError } from './stdin-closed.ts';
import type { ExitStatus, PipeSpawnOptions, SpawnedProcess } from './types.ts';

/** stdin of a pipe child: a writable pipe, or nothing at all (the child reads /dev/null). */
class PipeStdin implements StdinPort {
  readonly #stream: Writable | null;
  #open: boolean;

  constructor(stream: Writable | null) {
    this.#stream = stream;
    this.#open = stream !== null;
    // EPIPE once the child has gone: the pending write's callback reports it; this keeps it from throwing.
    stream?.on('error', () => {
      this.#open = false;
    });
  }

  write(bytes: Uint8Array): Promise<void> {
    const stream = this.#stream;
    if (stream === null || !this.#open || stream.destroyed) {
      return Promise.reject(
        stdinClosedError(stream === null ? 'the child was spawned without stdin' : 'stdin is closed'),
      );
    }
    return new Promise((resolve, reject) => {
      stream.write(bytes, (error) => {
        if (error) reject(stdinClosedError('writing to stdin failed: the child closed it', error));
        else resolve();
      });
    });
  }

  close(): void {
    if (!this.#open) return;
    this.#open = false;
    this.#stream?.end();
  }

  destroy(): void {
    this.#open = false;
    this.#stream?.destroy();
  }
}

function waitForSpawn(child: ChildProcess, file: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onSpawn = (): void => {
      child.off('error', onError);
      resolve();
    };
    const onError = (error: Error): void => {
      child.off('spawn', onSpawn);
      reject(new ExecError('spawnFailed', `failed to spawn ${file}: ${error.message}`, { cause: error }));
    };
    child.once('spawn', onSpawn);
    child.once('error', onError);
  });
}

/**
 * Spawns `argv` on pipes: stdout and stderr are read separately, stdin is a pipe (`stdin: 'pipe'`)
 * or /dev/null. The child runs in a new session (`setsid`), so its pid is also its process-group id
 * and every signal reaches its whole tree. The environment is exactly `options.env`.
 * Rejects with an `ExecError` (`spawnFailed`) naming the bad cwd or program.
 */
export async function spawnPipe(options: PipeSpawnOptions): Promise<SpawnedProcess> {
  const resolved = resolveSpawn(options);
  const logger = options.logger ?? NOOP_LOGGER;
  if (options.forkServer?.usable && options.forkServer.canStart(resolved)) {
    return spawnForked(options.forkServer, resolved, options, logger);
  }
  const stdio: StdioOptions = [options.stdin === 'pipe' ? 'pipe' : 'ignore', 'pipe', 'pipe'];
  let child: ChildProcess;
  try {
    child = forkJoiningCgroups(
      options,
      resolved,
      logger,
      () =>
        spawn(resolved.file, resolved.argv.slice(1), {
          cwd: resolved.cwd,
          env: resolved.env,
          argv0: resolved.arg0,
          detached: true,
          stdio,
        }),
      (joined) =>
        spawn(joined.file, joined.args, { cwd: resolved.cwd, env: joined.env, detached: true, stdio }),
    );
  } catch (error) {
    throw new ExecError('spawnFailed', `failed to spawn ${resolved.file}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const exit = new Promise<ExitStatus>((resolve) => {
    child.once('exit', (code, signal) => resolve(toExitStatus(code, signal)));
  });
  await waitForSpawn(child, resolved.file);
  const { pid, stdout, stderr } = child;
  if (pid === undefined || stdout === null || stderr === null) {
    throw new ExecError('spawnFailed', `failed to spawn ${resolved.file}: no pid or pipes`);
  }
  // Errors after a successful spawn (a failed kill) are not the child's fate; exit/close report that.
  child.on('error', (error) => logger.debug('child process error', { pid, error }));
  logger.debug('spawned on pipes', { pid, file: resolved.file, cwd: resolved.cwd });
  return pipeChild(options, logger, { pid, stdout, stderr, stdin: child.stdin, exit });
}

/** Through the fork server: the child joins its cgroups itself and never sees our descriptors. */
async function spawnForked(
  forkServer: ForkServer,
  resolved: ResolvedSpawn,
  options: PipeSpawnOptions,
  logger: Logger,
): Promise<SpawnedProcess> {
  const forked = await forkServer.spawn(resolved, {
    stdin: options.stdin === 'pipe',
    joinCgroups: options.joinCgroups,
    cgroupHome: options.cgroupHome,
  });
  logger.debug('spawned on pipes by the fork server', {
    pid: forked.pid,
    file: resolved.file,
    cwd: resolved.cwd,
  });
  return pipeChild(options, logger, forked);
}

function pipeChild(
  options: PipeSpawnOptions,
  logger: Logger,
  child: {
    readonly pid: number;
    readonly stdout: Readable;
    readonly stderr: Readable;
    readonly stdin: Writable | null;
    readonly exit: Promise<ExitStatus>;
  },
): SpawnedProcess {
  return new ChildHandle({
    pid: child.pid,
    tty: false,
    sources: [
      { name: 'stdout', stream: child.stdout },
      { name: 'stderr', stream: child.stderr },
    ],
    stdin: new PipeStdin(child.stdin),
    exit: child.exit,
    resize: undefined,
    politeSignal: 'SIGTERM',
    drainTimeoutMs: options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS,
    logger,
  });
}
