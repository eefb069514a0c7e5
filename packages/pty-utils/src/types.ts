import type { Logger } from '@execd/protocol';
import type { ForkServer } from './fork-server/fork-server.ts';

/** Label of an output chunk: `pty` for PTY children (one merged stream), else `stdout`/`stderr`. */
export type OutputStreamName = 'stdout' | 'stderr' | 'pty';

/** One read from a child's output stream, at most `MAX_CHUNK_BYTES` (8 KiB). */
export interface OutputChunk {
  readonly stream: OutputStreamName;
  readonly bytes: Uint8Array;
}

/**
 * How a child ended. `exitCode`: the code for a normal exit; when killed by signal N, 128+N for a
 * pipe child and 1 for a PTY child (as the original's backends); -1 unknown.
 */
export interface ExitStatus {
  readonly exitCode: number;
  /** The signal name when killed by a signal (e.g. `SIGKILL`), else null. */
  readonly signal: NodeJS.Signals | null;
}

/** Options shared by `spawnPty` and `spawnPipe`. */
export interface SpawnOptions {
  /** Program and arguments; `argv[0]` is resolved against `env.PATH` when it has no slash. */
  readonly argv: readonly string[];
  /** Absolute working directory; a missing one is a `spawnFailed` ExecError naming it. */
  readonly cwd: string;
  /** The child's entire environment (not merged with the parent's). */
  readonly env: Readonly<Record<string, string>>;
  /** What the child sees as `argv[0]` (default: `argv[0]`). */
  readonly arg0?: string | undefined;
  /** After the child exits, wait at most this long for its output streams to end (default 2000 ms). */
  readonly drainTimeoutMs?: number | undefined;
  /** Receives state changes at `debug` (spawn, exit, drain cap, signals). Default: no-op. */
  readonly logger?: Logger | undefined;
  /**
   * `cgroup.procs` files the child writes its pid into before it execs the program (a perl
   * wrapper does it; see `joinWrapperPerl`), so the program and all its descendants, daemons
   * included, start in those cgroups. Failing to join exits 125 with an `execd:` line on stderr.
   */
  readonly joinCgroups?: readonly string[] | undefined;
  /**
   * cgroup v1: the spawning thread's own groups' `tasks` files, one per entry of `joinCgroups`
   * (same hierarchies, same order). Given, the child is forked from inside its groups (the thread
   * steps in for the fork and back) and no wrapper runs; see `internal/thread-cgroup.ts`.
   */
  readonly cgroupHome?: readonly string[] | undefined;
}

/** Options for `spawnPty`. */
export interface PtySpawnOptions extends SpawnOptions {
  /** Terminal size; default 80x24. */
  readonly cols?: number | undefined;
  readonly rows?: number | undefined;
  /**
   * Start the child from this fork server's helper, in a terminal this process opens, rather than
   * by forking this process; ignored when the helper cannot (see `ForkServer.canStartInTerminal`).
   */
  readonly forkServer?: ForkServer | undefined;
}

/** Options for `spawnPipe`. */
export interface PipeSpawnOptions extends SpawnOptions {
  /** `pipe`: stdin is writable; `null` (default): stdin is /dev/null. */
  readonly stdin?: 'pipe' | 'null' | undefined;
  /**
   * Start the child from this fork server's helper rather than by forking this process (see
   * `ForkServer`); ignored once it is no longer `usable`.
   */
  readonly forkServer?: ForkServer | undefined;
}

/** Options for `terminate`. */
export interface TerminateOptions {
  /** Time between the polite signal (SIGHUP for a PTY, SIGTERM for pipes) and SIGKILL to the group. 0 = SIGKILL at once. */
  readonly graceMs?: number | undefined;
}

/**
 * A running child in its own session and process group, spawned in a PTY or on pipes.
 * Every method is safe to call after exit; `close()` is idempotent and reaps the whole group.
 */
export interface SpawnedProcess extends AsyncDisposable {
  /** OS pid of the child; also its process-group id. */
  readonly pid: number;
  /** True for PTY children. */
  readonly tty: boolean;
  /**
   * Output in arrival order across streams. Single consumer: a second call throws. Chunks are
   * buffered until read; above a high-water mark the child's output is paused (backpressure).
   * Ends once every stream has ended (after exit, or at the drain cap).
   */
  output(): AsyncIterable<OutputChunk>;
  /**
   * Writes to stdin (the PTY master for PTYs) and resolves once the bytes are handed to the OS, so
   * awaiting each write respects the pipe's backpressure. Rejects with an `ExecError` whose code is
   * `stdinClosed` (see `isStdinClosedError`) when stdin is closed or the reader went away.
   */
  write(bytes: Uint8Array | string): Promise<void>;
  /** Closes stdin (pipes: EOF; PTY: no-op, send ^D instead). Idempotent. */
  closeStdin(): void;
  /** Resizes the terminal; no-op for pipes and after exit. */
  resize(cols: number, rows: number): void;
  /**
   * SIGINT to the process group. A wrapper may need to look before it signals (a sandbox
   * delivers it to the command's own group inside); it then returns a promise, settled once sent.
   */
  interrupt(): void | Promise<void>;
  /**
   * Sends a signal to the whole process group (default SIGKILL); for a PTY child also (Linux) to
   * every other process still in its session, i.e. a job-control shell's background jobs.
   * No-op once the tree is gone.
   */
  kill(killSignal?: NodeJS.Signals): void;
  /**
   * Polite signal to the group (SIGHUP for a PTY, SIGTERM for pipes), then SIGKILL to the whole tree
   * (as `kill`) once the child exits or `graceMs` (default 5000) passes, whichever is first, so no
   * descendant survives. Resolves with the exit status once the child is reaped.
   */
  terminate(options?: TerminateOptions): Promise<ExitStatus>;
  /** Resolves when the child has exited (output may still be draining). Never rejects. */
  readonly exited: Promise<ExitStatus>;
  /** Resolves when the child has exited AND every output stream has ended or hit the drain cap. */
  readonly closed: Promise<ExitStatus>;
  /** Kills the group if still running, waits for `closed`, releases every handle. Idempotent. */
  close(): Promise<void>;
}
