import { readSync } from 'node:fs';
import { ReadStream } from 'node:tty';
import { ExecError } from '@execd/protocol';
import { DEFAULT_DRAIN_TIMEOUT_MS, DEFAULT_PTY_COLS, DEFAULT_PTY_ROWS } from './constants.ts';
import { toExitStatus } from './exit-status.ts';
import { ptyCommand } from './internal/arg0-wrapper.ts';
import { ChildHandle, type StdinPort } from './internal/child-handle.ts';
import { loadNativePty } from './internal/native-pty.ts';
import { NOOP_LOGGER } from './internal/noop-logger.ts';
import { resolveSpawn } from './resolve-program.ts';
import { stdinClosedError } from './stdin-closed.ts';
import type { ExitStatus, PtySpawnOptions, SpawnedProcess } from './types.ts';

/** Input of a PTY child: writes go to the master; there is no EOF to send (write ^D instead). */
class PtyStdin implements StdinPort {
  readonly #master: ReadStream;

  constructor(master: ReadStream) {
    this.#master = master;
  }

  write(bytes: Uint8Array): Promise<void> {
    const master = this.#master;
    if (master.destroyed || !master.writable)
      return Promise.reject(stdinClosedError('the terminal is closed'));
    return new Promise((resolve, reject) => {
      master.write(bytes, (error) => {
        if (error) reject(stdinClosedError('writing to the terminal failed', error));
        else resolve();
      });
    });
  }

  close(): void {}

  destroy(): void {
    this.#master.destroy();
  }
}

/** Read size of the synchronous drain at EOF; what is left then is at most the kernel's tty buffers. */
const DRAIN_READ_BYTES = 64 * 1024;

/**
 * Reads what is left on a PTY master after libuv reported EOF, until EIO (every slave fd is closed
 * and the line discipline is empty).
 *
 * HACK: libuv treats POLLHUP after a short read as EOF (`uv__stream_io`), but a PTY master returns at
 * most one line-discipline buffer (4 KiB) per read, so up to the kernel's tty buffer of output is
 * still queued when the child's exit hangs up the slave. The stream is opened half-open, so the fd
 * is still ours here; a non-blocking read loop collects the rest synchronously.
 */
function drainMaster(master: ReadStream, fd: number): Uint8Array[] {
  const rest: Uint8Array[] = [];
  while (!master.destroyed) {
    const buffer = Buffer.allocUnsafe(DRAIN_READ_BYTES);
    let read: number;
    try {
      read = readSync(fd, buffer, 0, DRAIN_READ_BYTES, null);
    } catch {
      break; // EIO: drained. EAGAIN: someone reopened the slave; libuv is no longer reading, so stop.
    }
    if (read === 0) break;
    rest.push(buffer.subarray(0, read));
  }
  return rest;
}

function checkSize(value: number, what: string): number {
  if (!Number.isInteger(value) || value < 1 || value > 0xffff) {
    throw new ExecError('invalidParams', `${what} must be an integer in 1..65535, got ${value}`);
  }
  return value;
}

/**
 * Spawns `argv` in a new pseudo-terminal (default 80x24). The child is a session leader with the
 * terminal as its controlling tty (pid == pgid == sid); its stdout and stderr arrive merged as
 * `pty` chunks. The environment is exactly `options.env` (no TERM/PWD added). `closed` waits until
 * the master reads EOF/EIO, so output written just before a fast exit is never lost.
 * Rejects with an `ExecError` (`spawnFailed`) naming the bad cwd or program.
 */
export async function spawnPty(options: PtySpawnOptions): Promise<SpawnedProcess> {
  const cols = checkSize(options.cols ?? DEFAULT_PTY_COLS, 'cols');
  const rows = checkSize(options.rows ?? DEFAULT_PTY_ROWS, 'rows');
  const resolved = resolveSpawn(options);
  const logger = options.logger ?? NOOP_LOGGER;
  const command = ptyCommand(resolved);
  const { native, helperPath } = loadNativePty();
  const envPairs = Object.entries(resolved.env).map(([key, value]) => `${key}=${value}`);
  let reportExit!: (status: ExitStatus) => void;
  const exit = new Promise<ExitStatus>((resolve) => {
    reportExit = resolve;
  });
  let forked: ReturnType<typeof native.fork>;
  try {
    forked = native.fork(
      command.file,
      command.args,
      envPairs,
      resolved.cwd,
      cols,
      rows,
      -1,
      -1,
      true,
      helperPath,
      (code, signal) => reportExit(toExitStatus(code, signal)),
    );
  } catch (error) {
    throw new ExecError(
      'spawnFailed',
      `failed to spawn ${resolved.file} in a pty: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  // Half-open: at EOF the socket must not close the fd before `drainMaster` has read the rest.
  const master = new ReadStream(forked.fd, { allowHalfOpen: true });
  logger.debug('spawned in a pty', {
    pid: forked.pid,
    file: resolved.file,
    cwd: resolved.cwd,
    tty: forked.pty,
  });
  return new ChildHandle({
    pid: forked.pid,
    tty: true,
    sources: [{ name: 'pty', stream: master, readRemainder: () => drainMaster(master, forked.fd) }],
    stdin: new PtyStdin(master),
    exit,
    resize: (newCols, newRows) => {
      // The fd number is only ours while the master is open; afterwards it may name another file.
      if (!master.destroyed) native.resize(forked.fd, checkSize(newCols, 'cols'), checkSize(newRows, 'rows'));
    },
    politeSignal: 'SIGHUP',
    drainTimeoutMs: options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS,
    logger,
  });
}
