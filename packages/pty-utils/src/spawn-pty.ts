import { closeSync, constants, openSync } from 'node:fs';
import type { ReadStream } from 'node:tty';
import { ExecError, type Logger, NOOP_LOGGER } from '@execd/protocol';
import { DEFAULT_DRAIN_TIMEOUT_MS, DEFAULT_PTY_COLS, DEFAULT_PTY_ROWS } from './constants.ts';
import { type ResolvedSpawn, resolveSpawn } from './executables/resolve-program.ts';
import { toPtyExitStatus } from './exit-status.ts';
import type { ForkedTerminalChild, ForkServer } from './fork-server/fork-server.ts';
import { ptyCommand } from './internal/arg0-wrapper.ts';
import { ChildHandle } from './internal/child-handle.ts';
import { openMasterReader } from './internal/master-reader.ts';
import { loadNativePty, type NativePty } from './internal/native-pty.ts';
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
  if (options.forkServer?.usable && options.forkServer.canStartInTerminal(resolved)) {
    return spawnPtyForked(options.forkServer, native, resolved, { cols, rows, options, logger });
  }
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
  const master = openMaster(forked.fd);
  logger.debug('spawned in a pty', {
    pid: forked.pid,
    file: resolved.file,
    cwd: resolved.cwd,
    tty: forked.pty,
  });
  return terminalChild(native, { pid: forked.pid, fd: forked.fd, master, exit }, options, logger);
}

/** A master reader on `fd` (half-open: at EOF the fd stays ours for `drainMaster`), tracked as a stray master. */
function openMaster(fd: number): ReadStream {
  const master = openMasterReader(fd);
  // The master is not close-on-exec: children forked while it is open must close it.
  trackStrayMaster(master);
  return master;
}

/**
 * Through the fork server: this process opens the terminal (node-pty's `open`, size set) and
 * keeps the master; the helper starts the command on the slave. The master reader exists before
 * the request is sent, so a fork of this process meanwhile knows to close it.
 */
async function spawnPtyForked(
  forkServer: ForkServer,
  native: NativePty,
  resolved: ResolvedSpawn,
  { cols, rows, options, logger }: { cols: number; rows: number; options: PtySpawnOptions; logger: Logger },
): Promise<SpawnedProcess> {
  let opened: ReturnType<NativePty['open']>;
  try {
    opened = native.open(cols, rows);
  } catch (error) {
    throw new ExecError(
      'spawnFailed',
      `failed to open a pty for ${resolved.file}: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  // node-pty's slave is not close-on-exec: hold a copy that is (see `spawnPty`) instead.
  const slaveHold = holdSlave(opened.pty);
  closeSync(opened.slave);
  const master = openMaster(opened.master);
  let child: ForkedTerminalChild;
  try {
    child = await forkServer.spawnInTerminal(resolved, {
      terminal: opened.pty,
      joinCgroups: options.joinCgroups,
      cgroupHome: options.cgroupHome,
    });
  } catch (error) {
    master.destroy();
    if (slaveHold !== undefined) closeSync(slaveHold);
    throw error;
  }
  if (slaveHold !== undefined) void child.exit.then(() => closeSync(slaveHold));
  logger.debug('spawned in a pty by the fork server', {
    pid: child.pid,
    file: resolved.file,
    cwd: resolved.cwd,
    tty: opened.pty,
  });
  return terminalChild(
    native,
    { pid: child.pid, fd: opened.master, master, exit: child.exit },
    options,
    logger,
  );
}

/** The handle of a child on a terminal whose master `fd` this process reads through `master`. */
function terminalChild(
  native: NativePty,
  child: {
    readonly pid: number;
    readonly fd: number;
    readonly master: ReadStream;
    readonly exit: Promise<ExitStatus>;
  },
  options: PtySpawnOptions,
  logger: Logger,
): SpawnedProcess {
  const { pid, fd, master, exit } = child;
  return new ChildHandle({
    pid,
    tty: true,
    sources: [{ name: 'pty', stream: master, readRemainder: () => drainMaster(master, fd) }],
    stdin: new PtyStdin(master, fd),
    exit,
    resize: (newCols, newRows) => {
      // The fd number is only ours while the master is open; afterwards it may name another file.
      if (!master.destroyed) native.resize(fd, checkSize(newCols, 'cols'), checkSize(newRows, 'rows'));
    },
    politeSignal: 'SIGHUP',
    drainTimeoutMs: options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS,
    logger,
  });
}
