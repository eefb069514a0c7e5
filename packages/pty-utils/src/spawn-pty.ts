import { closeSync, constants, openSync } from 'node:fs';
import { ExecError, NOOP_LOGGER } from '@execd/protocol';
import { DEFAULT_DRAIN_TIMEOUT_MS, DEFAULT_PTY_COLS, DEFAULT_PTY_ROWS } from './constants.ts';
import { resolveSpawn } from './executables/resolve-program.ts';
import { toPtyExitStatus } from './exit-status.ts';
import { ptyCommand } from './internal/arg0-wrapper.ts';
import { ChildHandle } from './internal/child-handle.ts';
import { openMasterReader } from './internal/master-reader.ts';
import { loadNativePty } from './internal/native-pty.ts';
import { drainMaster, PtyStdin } from './internal/pty-master.ts';
import { trackStrayMaster } from './internal/stray-descriptors.ts';
import { forkJoiningCgroups } from './internal/thread-cgroup.ts';
import type { ExitStatus, PtySpawnOptions, SpawnedProcess } from './types.ts';

function checkSize(value: number, what: string): number {
  if (!Number.isInteger(value) || value < 1 || value > 0xffff) {
    throw new ExecError('invalidParams', `${what} must be an integer in 1..65535, got ${value}`);
  }
  return value;
}

/** Opens the terminal's slave side without making it our controlling tty; undefined if it cannot. */
function holdSlave(path: string): number | undefined {
  try {
    return openSync(path, constants.O_RDWR | constants.O_NOCTTY);
  } catch {
    return undefined;
  }
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
  const { native, helperPath } = loadNativePty();
  let reportExit!: (status: ExitStatus) => void;
  const exit = new Promise<ExitStatus>((resolve) => {
    reportExit = resolve;
  });
  const fork = (command: { file: string; args: readonly string[] }, env: Readonly<Record<string, string>>) =>
    native.fork(
      command.file,
      command.args,
      Object.entries(env).map(([key, value]) => `${key}=${value}`),
      resolved.cwd,
      cols,
      rows,
      -1,
      -1,
      true,
      helperPath,
      (code, signal) => reportExit(toPtyExitStatus(code, signal)),
    );
  let forked: ReturnType<typeof native.fork>;
  try {
    forked = forkJoiningCgroups(
      options,
      resolved,
      logger,
      // The join wrapper sets argv[0] itself; otherwise see `ptyCommand`.
      () => fork(ptyCommand(resolved), resolved.env),
      (joined) => fork(joined, joined.env),
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
  // Hold the slave side open until the child is reaped. A program that closes its stdio before
  // exiting (GNU cat on ^D) would otherwise make the master read EIO while the child still runs;
  // the master is then destroyed, and closing it hangs up the terminal: SIGHUP, exit 129 instead of 0.
  const slaveHold = holdSlave(forked.pty);
  if (slaveHold !== undefined) void exit.then(() => closeSync(slaveHold));
  // Half-open: at EOF the socket must not close the fd before `drainMaster` has read the rest.
  const master = openMasterReader(forked.fd);
  // The master is not close-on-exec: children forked while it is open must close it.
  trackStrayMaster(master);
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
    stdin: new PtyStdin(master, forked.fd),
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
