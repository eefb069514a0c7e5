import type { ChildProcess } from 'node:child_process';
import { constants as fsConstants, openSync } from 'node:fs';
import { Socket } from 'node:net';
import { ExecError, type Logger, NOOP_LOGGER } from '@execd/protocol';
import type { ResolvedSpawn } from '../executables/resolve-program.ts';
import { toExitStatus, toPtyExitStatus } from '../exit-status.ts';
import { liveStartTime } from '../process-group.ts';
import type { ExitStatus } from '../types.ts';
import { type ForkServerHelper, startHelperProcess } from './helper-process.ts';
import {
  type CgroupJoin,
  type ExitDecoder,
  encodeRequest,
  errnoName,
  exitFromWaitStatus,
  startRequest,
} from './helper-protocol.ts';

export { type ForkServerHelper, forkServerHelperProgram } from './helper-process.ts';

/** A command the fork server started: its pid, this process's ends of its pipes, its exit. */
export interface ForkedChild {
  readonly pid: number;
  readonly stdout: Socket;
  readonly stderr: Socket;
  /** Null when it was started with stdin on /dev/null. */
  readonly stdin: Socket | null;
  /** Resolves (never rejects) once the command was reaped. */
  readonly exit: Promise<ExitStatus>;
}

export interface ForkServerOptions {
  readonly logger?: Logger | undefined;
  /**
   * The helpers to try, in order (default: python, then perl). Without any that starts here,
   * {@link ForkServer.start} returns undefined.
   */
  readonly helpers?: readonly ForkServerHelper[] | undefined;
}

/** What a fork server has done, for metrics. */
export interface ForkServerStats {
  /** Whether it takes commands (false once the helper ended or it was closed). */
  readonly usable: boolean;
  /** Commands it started. */
  readonly started: number;
  /** Requests that failed (exec or chdir failures, the helper gone). */
  readonly failed: number;
}

/** How often the commands of a helper that died are looked for in /proc (nobody reaps them for us). */
const ORPHAN_POLL_MS = 100;

/** A command the fork server started in a terminal: its pid and its exit (PTY exit codes). */
export interface ForkedTerminalChild {
  readonly pid: number;
  /** Resolves (never rejects) once the command was reaped. */
  readonly exit: Promise<ExitStatus>;
}

interface Pending {
  readonly resolve: (child: ForkedChild | ForkedTerminalChild) => void;
  readonly reject: (error: Error) => void;
  readonly resolved: ResolvedSpawn;
  readonly stdin: boolean;
  /** Started in this terminal (its slave's path): no pipes to open, PTY exit codes. */
  readonly terminal?: string | undefined;
}

/**
 * Starts commands from a small helper process instead of forking this one (the protocol they
 * speak: `helper-protocol.ts`).
 *
 * libuv forks the whole server for every command, on its main thread: the page tables of a
 * server holding hundreds of megabytes (connections, retained output) are copied, and every page
 * the server writes afterwards faults once. Under many clients that is half of the server's main
 * thread. The helper (`python-helper.ts`, or `perl-helper.ts` where there is no trusted
 * `python3`) is a few megabytes and starts the command on its own; the server opens the
 * command's pipes through `/proc/<helper>/fd/N` (pipes, unlike libuv's socket pairs, can be
 * reopened that way) and hears of the exit from the helper, which reaps it.
 *
 * Commands it starts hold descriptors 0-2 only, whatever this process has open (a terminal
 * master included), and are in their cgroups before the program runs. The Python helper also
 * starts commands in a terminal this process opened ({@link spawnInTerminal}). When no helper
 * can be started (neither a trusted python3 nor perl, not Linux, a `/proc` that hides the
 * helper's descriptors) {@link ForkServer.start} returns undefined and
 * spawns fork as before. If the helper dies, requests in flight fail with `spawnFailed`, later
 * ones are refused ({@link usable} turns false), and the commands it had started are reported
 * exited (code -1) once they are gone from /proc.
 */
export class ForkServer {
  readonly #helper: ChildProcess;
  readonly #helperPid: number;
  readonly #kind: ForkServerHelper;
  readonly #logger: Logger;
  readonly #pending = new Map<string, Pending>();
  readonly #exits = new Map<
    number,
    { resolve: (status: ExitStatus) => void; started: string | undefined; decode: ExitDecoder }
  >();
  readonly #ended: Promise<void>;
  #nextId = 0;
  #startedCount = 0;
  #failedCount = 0;
  #alive = true;
  #closing = false;
  #closed: Promise<void> | undefined;
  #lines = '';

  private constructor(helper: ChildProcess, helperPid: number, kind: ForkServerHelper, logger: Logger) {
    this.#helper = helper;
    this.#helperPid = helperPid;
    this.#kind = kind;
    this.#logger = logger;
    // 'close', not 'exit': its last lines (a command's exit) are read by then.
    this.#ended = new Promise((resolve) =>
      helper.once('close', (code, signal) => {
        this.#helperGone(code, signal);
        resolve();
      }),
    );
    helper.stdout?.on('data', (text: string) => this.#onData(text));
    helper.stderr?.on('data', (text: string) => logger.warn('fork server helper', { stderr: text.trim() }));
    helper.stdin?.on('error', (error) => logger.debug('fork server helper stdin', { error }));
  }

  /**
   * Starts a helper and proves this process can open its descriptors; undefined (nothing left
   * running) when none can be used here.
   */
  static async start(options: ForkServerOptions = {}): Promise<ForkServer | undefined> {
    const logger = options.logger ?? NOOP_LOGGER;
    if (process.platform !== 'linux') return undefined;
    for (const kind of options.helpers ?? ['python', 'perl']) {
      const helper = await startHelperProcess(kind, logger);
      if (helper?.pid === undefined) continue;
      const server = new ForkServer(helper, helper.pid, kind, logger);
      // An idle helper must not keep this process alive (see `#holdLoop`).
      helper.unref();
      for (const stream of [helper.stdin, helper.stdout, helper.stderr]) (stream as Socket | null)?.unref();
      return server;
    }
    return undefined;
  }

  /** False once the helper ended or `close()` was called: spawn without it then. */
  get usable(): boolean {
    return this.#alive && !this.#closing;
  }

  stats(): ForkServerStats {
    return { usable: this.usable, started: this.#startedCount, failed: this.#failedCount };
  }

  /** The helper's pid (for diagnostics and tests). */
  get helperPid(): number {
    return this.#helperPid;
  }

  /** Which helper runs. */
  get helper(): ForkServerHelper {
    return this.#kind;
  }

  /** Whether this helper can start `resolved`: Python refuses an empty `argv[0]`. */
  canStart(resolved: ResolvedSpawn): boolean {
    return this.#kind === 'perl' || resolved.arg0 !== '';
  }

  /** Whether this helper can start `resolved` in a terminal (the Python helper only). */
  canStartInTerminal(resolved: ResolvedSpawn): boolean {
    return this.#kind === 'python' && resolved.arg0 !== '';
  }

  /**
   * Starts `resolved` (already validated by `resolveSpawn`) on pipes. Rejects with `spawnFailed`
   * when the exec fails or the helper is gone.
   */
  spawn(resolved: ResolvedSpawn, options: CgroupJoin & { readonly stdin: boolean }): Promise<ForkedChild> {
    return this.#request(resolved, { ...options, terminal: undefined }) as Promise<ForkedChild>;
  }

  /**
   * Starts `resolved` in the terminal whose slave is `terminal` (a path under /dev/pts; this
   * process holds the master): the helper gives it node-pty's settings and the command opens it
   * as its controlling terminal on 0-2. Exit codes are a PTY's (1 for a signal death). Rejects
   * with `spawnFailed` as {@link spawn}; check {@link canStartInTerminal} first.
   */
  spawnInTerminal(
    resolved: ResolvedSpawn,
    options: CgroupJoin & { readonly terminal: string },
  ): Promise<ForkedTerminalChild> {
    if (!this.canStartInTerminal(resolved)) {
      return Promise.reject(
        new ExecError('spawnFailed', `failed to spawn ${resolved.file}: this fork server has no terminals`),
      );
    }
    return this.#request(resolved, { ...options, stdin: false });
  }

  #request(
    resolved: ResolvedSpawn,
    options: CgroupJoin & { readonly stdin: boolean; readonly terminal: string | undefined },
  ): Promise<ForkedChild | ForkedTerminalChild> {
    if (!this.usable) {
      return Promise.reject(
        new ExecError('spawnFailed', `failed to spawn ${resolved.file}: the fork server ended`),
      );
    }
    const id = String(this.#nextId++);
    const { stdin, terminal } = options;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, resolved, stdin, terminal });
      this.#holdLoop();
      this.#send(startRequest(id, resolved, terminal ?? (stdin ? 'p' : 'n'), options));
    });
  }

  /**
   * Ends the helper; resolves when it has exited. Idempotent. End the commands it started first:
   * a sandbox's bubblewrap ends with the helper (as with a server that dies), others run on
   * unreaped by it and are reported exited (code -1) once they are gone.
   */
  close(): Promise<void> {
    this.#closing = true;
    this.#closed ??= (async () => {
      // Waited for: the helper is held until it has exited.
      this.#helper.ref();
      this.#helper.stdin?.end();
      await this.#ended;
    })();
    return this.#closed;
  }

  /** Keeps the event loop alive while a request is answered or a command it started runs. */
  #holdLoop(): void {
    const busy = this.#pending.size > 0 || this.#exits.size > 0;
    const stdout = this.#helper.stdout as Socket | null;
    if (busy) stdout?.ref();
    else stdout?.unref();
  }

  #send(fields: readonly string[]): void {
    this.#helper.stdin?.write(encodeRequest(fields));
  }

  #onData(text: string): void {
    this.#lines += text;
    for (let end = this.#lines.indexOf('\n'); end >= 0; end = this.#lines.indexOf('\n')) {
      const line = this.#lines.slice(0, end);
      this.#lines = this.#lines.slice(end + 1);
      this.#onLine(line.split(' '));
    }
    this.#holdLoop();
  }

  #onLine([kind, first = '', ...rest]: string[]): void {
    if (kind === 'X') {
      const waiter = this.#exits.get(Number(first));
      this.#exits.delete(Number(first));
      waiter?.resolve(exitFromWaitStatus(Number(rest[0]), waiter.decode));
      return;
    }
    const pending = this.#pending.get(first);
    if (pending === undefined) return;
    this.#pending.delete(first);
    if (kind === 'F') {
      this.#failedCount += 1;
      const code = errnoName(rest[0] ?? '');
      const where = rest[1] === 'chdir' ? ` (cwd ${pending.resolved.cwd})` : '';
      pending.reject(
        new ExecError(
          'spawnFailed',
          `failed to spawn ${pending.resolved.file}: spawn ${pending.resolved.file} ${code}${where}`,
        ),
      );
      return;
    }
    if (kind === 'S') this.#started(first, pending, rest.map(Number));
  }

  #started(id: string, pending: Pending, [pid = 0, outFd = 0, errFd = 0, inFd = -1]: number[]): void {
    const decode = pending.terminal === undefined ? toExitStatus : toPtyExitStatus;
    const exit = new Promise<ExitStatus>((resolve) =>
      this.#exits.set(pid, { resolve, started: liveStartTime(pid), decode }),
    );
    let child: ForkedChild | ForkedTerminalChild = { pid, exit };
    if (pending.terminal === undefined) {
      const opened: Socket[] = [];
      const open = (fd: number, write: boolean): Socket => {
        const flags = (write ? fsConstants.O_WRONLY : fsConstants.O_RDONLY) | fsConstants.O_NONBLOCK;
        const socket = new Socket({
          fd: openSync(`/proc/${this.#helperPid}/fd/${fd}`, flags),
          readable: !write,
          writable: write,
        });
        opened.push(socket);
        return socket;
      };
      try {
        const stdout = open(outFd, false);
        const stderr = open(errFd, false);
        child = { pid, stdout, stderr, stdin: pending.stdin ? open(inFd, true) : null, exit };
      } catch (error) {
        // The command runs, but nobody here can read it (out of descriptors?): end it rather than
        // leave it blocked, and close what was opened.
        for (const socket of opened) socket.destroy();
        this.#send(['r', id]);
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {}
        pending.reject(
          new ExecError(
            'spawnFailed',
            `failed to spawn ${pending.resolved.file}: its pipes could not be opened`,
            {
              cause: error,
            },
          ),
        );
        return;
      }
    }
    this.#send(['r', id]);
    this.#startedCount += 1;
    pending.resolve(child);
  }

  #helperGone(code: number | null, signal: NodeJS.Signals | null): void {
    this.#alive = false;
    if (!this.#closing || this.#exits.size > 0) {
      this.#logger.error('the fork server helper ended', { code, signal, running: this.#exits.size });
    }
    for (const [id, pending] of this.#pending) {
      this.#pending.delete(id);
      this.#failedCount += 1;
      pending.reject(
        new ExecError('spawnFailed', `failed to spawn ${pending.resolved.file}: the fork server ended`),
      );
    }
    if (this.#exits.size === 0) return;
    // Its commands were handed to init: poll until each is gone, then report it with no status.
    const timer = setInterval(() => {
      for (const [pid, waiter] of this.#exits) {
        const now = liveStartTime(pid);
        if (now !== undefined && now === waiter.started) continue;
        this.#exits.delete(pid);
        waiter.resolve({ exitCode: -1, signal: null });
      }
      if (this.#exits.size === 0) clearInterval(timer);
    }, ORPHAN_POLL_MS);
    timer.unref();
  }
}
