import type { ExitStatus, OutputChunk, SpawnedProcess, TerminateOptions } from '@execd/pty-utils';
import type { CommandCgroup } from './limits/index.ts';
import { killMarked } from './linux/marker-scan.ts';
import { interruptSandboxedCommand } from './linux/sandbox-interrupt.ts';

/** What {@link containProcess} adds to a spawned child. */
export interface Containment {
  /** The child's cgroup: every process of its tree, whatever its session (absent: none here). */
  readonly group?: CommandCgroup | undefined;
  /** The child is bubblewrap: interrupts go to the command's own group inside the sandbox. */
  readonly bubblewrap: boolean;
  /** No group: the environment marker of the child's tree (see `marker-scan.ts`). */
  readonly marker?: string | undefined;
}

/** bubblewrap's exit codes for a command killed by SIGINT or SIGQUIT (128 + N). */
const BUBBLEWRAP_SIGNAL_EXITS: ReadonlyMap<number, NodeJS.Signals> = new Map([
  [130, 'SIGINT'],
  [131, 'SIGQUIT'],
]);

/** How long killing a marked tree keeps re-scanning for stragglers. */
const MARKER_KILL_TIMEOUT_MS = 5_000;

/**
 * Wraps a spawned child so that ending it ends its whole tree, and an interrupt reaches the
 * sandboxed command rather than its sandbox:
 * - `kill('SIGKILL')`, `terminate` and `close` also SIGKILL every process of the child's cgroup,
 *   `setsid` daemons and double-forked orphans included, which the group and session signals of
 *   pty-utils cannot reach; `close` kills them before waiting for the output streams (a daemon
 *   holding the pipe would otherwise hold `closed` too). The group itself is closed (and removed)
 *   once the child has closed.
 * - `interrupt` of a bubblewrap child goes to the command's foreground group inside the sandbox
 *   (see `interruptSandboxedCommand`), so the command's trap runs and its own exit status is
 *   reported; before the command exists, it falls back to the child's group.
 */
export function containProcess(child: SpawnedProcess, containment: Containment): SpawnedProcess {
  const { group, bubblewrap, marker } = containment;
  const killMarkedTree = async (): Promise<void> => {
    if (marker !== undefined) await killMarked(marker, Date.now() + MARKER_KILL_TIMEOUT_MS);
  };
  if (group !== undefined) void child.closed.then(() => group.close());
  // Once the command is done, whatever of its tree is left (a daemon) goes, as a group would.
  if (marker !== undefined) void child.closed.then(killMarkedTree, killMarkedTree);
  if (group === undefined && marker === undefined && !bubblewrap) return child;
  const killTree = async (): Promise<void> => {
    // Never throws: what a kill misses is killed again when the group closes.
    await group?.killAll().catch(() => {});
    await killMarkedTree();
  };
  // A sandboxed PTY command killed by a ^C (or an interrupt) dies inside the sandbox and
  // bubblewrap, which survives it, exits 128 + N. Outside a sandbox (and in the original, where
  // bubblewrap itself dies of the ^C) a PTY child killed by a signal reports 1: after an
  // interrupt, a 128 + N from bubblewrap is read as that signal death. A trapped ^C exits with
  // the command's own code (42 stays 42).
  let interrupted = false;
  const ptySignalDeath = (status: ExitStatus): ExitStatus => {
    if (!interrupted || !bubblewrap || !child.tty || status.signal !== null) return status;
    const signal = BUBBLEWRAP_SIGNAL_EXITS.get(status.exitCode);
    return signal === undefined ? status : { exitCode: 1, signal };
  };
  const exited = child.exited.then(ptySignalDeath);
  const closedStatus = child.closed.then(ptySignalDeath);
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      await killTree();
      await child.close();
      await group?.close();
    })();
    return closing;
  };
  return {
    pid: child.pid,
    tty: child.tty,
    output: (): AsyncIterable<OutputChunk> => child.output(),
    write: (bytes: Uint8Array | string): Promise<void> => {
      // ^C (SIGINT) or ^\\ (SIGQUIT) typed at the terminal.
      if (
        child.tty &&
        (typeof bytes === 'string' ? /[\x03\x1c]/.test(bytes) : bytes.some((b) => b === 0x03 || b === 0x1c))
      )
        interrupted = true;
      return child.write(bytes);
    },
    closeStdin: (): void => child.closeStdin(),
    resize: (cols: number, rows: number): void => child.resize(cols, rows),
    interrupt: async (): Promise<void> => {
      interrupted = true;
      if (bubblewrap && (await interruptSandboxedCommand(child.pid, 'SIGINT'))) return;
      await child.interrupt();
    },
    kill: (killSignal: NodeJS.Signals = 'SIGKILL'): void => {
      child.kill(killSignal);
      if (killSignal === 'SIGKILL') void killTree();
    },
    terminate: async (options?: TerminateOptions): Promise<ExitStatus> => {
      const status = await child.terminate(options);
      await killTree();
      return ptySignalDeath(status);
    },
    exited,
    closed: closedStatus,
    close,
    [Symbol.asyncDispose]: close,
  };
}
