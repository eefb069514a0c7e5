import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, constants as fsConstants, openSync } from 'node:fs';
import { Socket } from 'node:net';
import { constants as osConstants } from 'node:os';
import { ExecError, type Logger, NOOP_LOGGER } from '@execd/protocol';
import type { ResolvedSpawn } from '../executables/resolve-program.ts';
import { trustedExecutable } from '../executables/trusted-executable.ts';
import { toExitStatus, toPtyExitStatus } from '../exit-status.ts';
import { joinWrapperPerl } from '../internal/cgroup-join.ts';
import { liveStartTime } from '../process-group.ts';
import type { ExitStatus } from '../types.ts';
import { PERL_HELPER } from './perl-helper.ts';
import { PYTHON_HELPER } from './python-helper.ts';

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

/** Which program the helper is: Python where a trusted `python3` is (faster), else perl. */
export type ForkServerHelper = 'python' | 'perl';

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

/** How long the helper may take to start before the server forks without it. */
const START_TIMEOUT_MS = 10_000;

/** How often the commands of a helper that died are looked for in /proc (nobody reaps them for us). */
const ORPHAN_POLL_MS = 100;

const ERRNO_NAMES: ReadonlyMap<number, string> = new Map(
  Object.entries(osConstants.errno).map(([name, num]) => [num, name]),
);

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

/** The cgroups a command starts in (as `SpawnOptions`' fields of the same names). */
interface CgroupJoin {
  readonly joinCgroups?: readonly string[] | undefined;
  /** cgroup v1: this process's own groups' `tasks` files, as pty-utils' `cgroupHome`. */
  readonly cgroupHome?: readonly string[] | undefined;
}

/** How each helper-reaped command's wait status becomes an exit status. */
type ExitDecoder = typeof toExitStatus;

/*
 * The helper protocol (both helpers speak it). Requests arrive on the helper's stdin as frames: a
 * 4-byte big-endian length, then NUL-separated fields.
 * - `s id stdin cwd file nargv argv… nenv NAME=VALUE… ngroups procsfile… nhomes tasksfile…`
 *   starts a command: three pipes (stdin only for `stdin` = `p`, else /dev/null; or, when
 *   `stdin` is a path, in that terminal, which the server opened: Python helper only), in `cwd` (a
 *   failure is the request's), with exactly the environment given, `file` exec'd with `argv`
 *   (argv[0] included), in a session of its own, every signal at its default and none blocked,
 *   holding descriptors 0-2 only, and a member of the cgroups whose `procs` files are given
 *   before its program runs. `homes` (cgroup v1, one per group, or none) are the server's own
 *   groups' `tasks` files, where the helper was started: a helper that steps into the command's
 *   groups to start it comes back there (the perl helper ignores them).
 * - `r id…` closes the helper's ends of those commands' pipes (the server has opened its own by
 *   then, through `/proc/<helper>/fd/N`).
 * Replies on stdout, a line each: `P fd` once at start (a pipe, to prove the server can open the
 * helper's descriptors), `S id pid outfd errfd infd` (infd -1 without stdin), `F id errno stage`,
 * and `X pid waitstatus` when a command it started is reaped. The helper runs in a session of its
 * own (no terminal or process-group signal reaches it) and ends as soon as stdin closes: the
 * server closed it or died, and a sandbox's bubblewrap (`--die-with-parent`, its parent being the
 * helper) must then end with it, as it would with the server.
 */

/**
 * Starts commands on pipes from a small helper process instead of forking this one.
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
 * starts commands in a terminal this process opened ({@link spawnInTerminal}). When no helper can be started (neither a trusted python3 nor perl, not Linux, a
 * `/proc` that hides the helper's descriptors) {@link ForkServer.start} returns undefined and
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
      const server = await ForkServer.#startHelper(kind, logger);
      if (server !== undefined) return server;
    }
    return undefined;
  }

  static async #startHelper(kind: ForkServerHelper, logger: Logger): Promise<ForkServer | undefined> {
    const program = kind === 'python' ? trustedExecutable('python3') : (joinWrapperPerl() ?? undefined);
    if (program === undefined) return undefined;
    // Python isolated (no PYTHON* variables, no user site) and without `site` (faster to start).
    const args = kind === 'python' ? ['-I', '-S', '-c', PYTHON_HELPER] : ['-e', PERL_HELPER];
    let helper: ChildProcess;
    try {
      helper = spawn(program, args, { stdio: ['pipe', 'pipe', 'pipe'], detached: true, env: {} });
    } catch (error) {
      logger.debug('fork server helper did not start', { kind, error });
      return undefined;
    }
    helper.stdout?.setEncoding('latin1');
    helper.stderr?.setEncoding('utf8');
    const probe = await new Promise<number | undefined>((resolve) => {
      let text = '';
      const onData = (chunk: string): void => {
        text += chunk;
        const match = /^P (\d+)\n/.exec(text);
        if (match === null) return;
        helper.stdout?.off('data', onData);
        helper.off('exit', onExit);
        resolve(Number(match[1]));
      };
      const onExit = (): void => resolve(undefined);
      helper.stdout?.on('data', onData);
      helper.once('exit', onExit);
      helper.once('error', onExit);
      setTimeout(onExit, START_TIMEOUT_MS).unref();
    });
    const pid = helper.pid;
    if (probe === undefined || pid === undefined) {
      logger.debug('fork server helper did not come up', { kind });
      helper.kill('SIGKILL');
      return undefined;
    }
    try {
      closeSync(openSync(`/proc/${pid}/fd/${probe}`, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK));
    } catch (error) {
      logger.debug("fork server unavailable: the helper's descriptors cannot be opened", { error });
      helper.kill('SIGKILL');
      return undefined;
    }
    const server = new ForkServer(helper, pid, kind, logger);
    server.#send(['r', 'probe']);
    // An idle helper must not keep this process alive (see `#holdLoop`).
    helper.unref();
    for (const stream of [helper.stdin, helper.stdout, helper.stderr]) (stream as Socket | null)?.unref();
    return server;
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
    const groups = options.joinCgroups ?? [];
    const homes = options.cgroupHome?.length === groups.length ? options.cgroupHome : [];
    const env = Object.entries(resolved.env).map(([name, value]) => `${name}=${value}`);
    const argv = [resolved.arg0, ...resolved.argv.slice(1)];
    const { stdin, terminal } = options;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, resolved, stdin, terminal });
      this.#holdLoop();
      this.#send([
        's',
        id,
        terminal ?? (stdin ? 'p' : 'n'),
        resolved.cwd,
        resolved.file,
        String(argv.length),
        ...argv,
        String(env.length),
        ...env,
        String(groups.length),
        ...groups,
        String(homes.length),
        ...homes,
      ]);
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
    const body = Buffer.from(fields.join('\0'), 'utf8');
    const head = Buffer.allocUnsafe(4);
    head.writeUInt32BE(body.length, 0);
    this.#helper.stdin?.write(Buffer.concat([head, body]));
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
      const status = Number(rest[0]);
      const waiter = this.#exits.get(Number(first));
      this.#exits.delete(Number(first));
      // A wait status: the low 7 bits are the signal (0: a normal exit, whose code is bits 8-15).
      const signal = status & 0x7f;
      if (waiter === undefined) return;
      waiter.resolve(signal === 0 ? waiter.decode((status >> 8) & 0xff, null) : waiter.decode(null, signal));
      return;
    }
    const pending = this.#pending.get(first);
    if (pending === undefined) return;
    this.#pending.delete(first);
    if (kind === 'F') {
      this.#failedCount += 1;
      const code = ERRNO_NAMES.get(Number(rest[0])) ?? `errno ${rest[0]}`;
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
    if (pending.terminal !== undefined) {
      this.#send(['r', id]);
      this.#startedCount += 1;
      pending.resolve({ pid, exit });
      return;
    }
    let child: ForkedChild;
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
