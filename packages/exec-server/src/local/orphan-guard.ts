import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import type { ExitStatus, OutputChunk, SpawnedProcess, TerminateOptions } from '@execd/pty-utils';

/**
 * The watchdog: a POSIX shell that reads `+PGID` / `-PGID` lines (a process group to guard, or to
 * forget), `>ID FILE` / `<ID` lines (a command cgroup's `cgroup.procs` to guard under a number
 * of the server's choosing, or to forget) and `@ID FOLDER` / `%ID` lines (a sandbox's placeholder
 * to remove, or to forget) on stdin. At EOF, which the kernel delivers when every holder of the
 * pipe's write end is gone, i.e. when the server died, however it died (SIGKILL included), it
 * SIGKILLs every process listed in a guarded cgroup (a `setsid` daemon is still there: no group
 * or session reaches it; read again a few times for children forked meanwhile), every guarded
 * process group, then (Linux) every other process of the guarded sessions (a PTY shell's
 * background jobs live in other groups of the same session). Node cannot set
 * `PR_SET_PDEATHSIG`, and a child that neither writes to its pipes nor minds SIGHUP would
 * otherwise outlive the server. Last, it removes the placeholders of the sandboxes that were
 * running: the empty folders bubblewrap made in a workspace as mount points for missing `.git`,
 * `.codex`, `.agents`, which the server removes when a sandbox ends and which a dead server would
 * leave behind (`rmdir` only: a folder something was put in stays). It waits 0.2 s first: a
 * sandbox without a cgroup dies through bubblewrap's parent-death signal, one step after the
 * kill, and no sandboxed process may be left to create the name once its mount is gone.
 *
 * Each entry is a shell variable of its own (`g_PGID` counts the guards of a group, `c_ID` holds a
 * file), so adding and forgetting cost the same with ten entries or ten thousand; the list they
 * are read back from at EOF is `set`'s. (Keeping them in one string, as before, made forgetting an
 * entry a pattern match over the whole string: with 1,000 commands running, forgetting them in
 * random order kept the shell busy for over ten minutes.) Only digits are ever evaluated.
 */
const WATCHDOG_SCRIPT = `trap '' HUP INT TERM PIPE
set -f
while IFS= read -r l; do
  i=\${l#?}; i=\${i%% *}
  case $i in ''|*[!0-9]*) continue ;; esac
  case $l in
    +*) eval "g_$i=\\$((\\\${g_$i:-0}+1))" ;;
    -*) eval "n=\\\${g_$i:-0}"; if [ "$n" -gt 1 ]; then eval "g_$i=\\$((n-1))"; else unset "g_$i"; fi ;;
    \\>*) f=\${l#* }; eval "c_$i=\\$f" ;;
    \\<*) unset "c_$i" ;;
    @*) f=\${l#* }; eval "d_$i=\\$f" ;;
    %*) unset "d_$i" ;;
  esac
done
names=$(set | while IFS= read -r v; do case $v in [gcd]_[0-9]*=*) echo "\${v%%=*}" ;; esac; done)
[ -n "$names" ] || exit 0
for n in $names; do
  case $n in c_*) eval "f=\\$$n" ;; *) continue ;; esac
  for r in 1 2 3 4 5; do
    while read -r p; do kill -KILL "$p" 2>/dev/null; done 2>/dev/null < "$f" || break
  done
done
for n in $names; do case $n in g_*) kill -KILL -- "-\${n#g_}" 2>/dev/null ;; esac; done
if [ -d /proc/self ]; then
  set +f
  for s in /proc/[0-9]*/stat; do
    read -r l 2>/dev/null < "$s" || continue
    set -f; set -- \${l##*) }; set +f
    case $4 in ''|*[!0-9]*) continue ;; esac
    eval "m=\\\${g_$4-}"
    [ -n "$m" ] && { p=\${s#/proc/}; kill -KILL "\${p%/stat}" 2>/dev/null; }
  done
  set -f
fi
case $names in *d_*)
  sleep 0.2 2>/dev/null || sleep 1
  for n in $names; do
    case $n in d_*) eval "f=\\$$n"; rmdir -- "$f" 2>/dev/null ;; esac
  done ;;
esac
`;

/** A watchdog that keeps dying is given up on (guarding is best effort, never a crash loop). */
const MAX_WATCHDOG_RESTARTS = 3;

/** What a command leaves to clean up besides its process group, named by path. */
export interface GuardedPaths {
  /** The command cgroup's `cgroup.procs` file(s): every process listed there is killed. */
  readonly groupProcsFiles?: readonly string[] | undefined;
  /** Its sandbox's placeholders (empty folders): removed once everything is killed. */
  readonly placeholders?: readonly string[] | undefined;
}

/** The watchdog's line prefixes for a path it guards, and for forgetting it. */
const PATH_LINES = {
  cgroup: { add: '>', forget: '<' },
  placeholder: { add: '@', forget: '%' },
} as const;

interface GuardedPath {
  readonly id: number;
  readonly kind: keyof typeof PATH_LINES;
  readonly path: string;
}

/**
 * Kills the process groups of this process's children when this process dies without cleaning
 * up (SIGKILL, OOM killer, crash), then removes their sandboxes' placeholders. One watchdog
 * process per Node process, started on first use; it does not keep the event loop alive. No-op
 * on Windows.
 */
export class OrphanGuard {
  /** Guarded process groups, each with how many guards it has (a pid can be reused meanwhile). */
  readonly #guarded = new Map<number, number>();
  /** Guarded paths (cgroup.procs files, placeholders), by their number on the wire. */
  readonly #paths = new Map<number, GuardedPath>();
  #nextPathId = 1;
  #watchdog: ChildProcess | undefined;
  #broken = false;
  #restarts = 0;

  /**
   * Guards process group `pgid`, the processes listed in `groupProcsFiles` (the command's
   * cgroup, where its daemons in sessions of their own still are) and the removal of its
   * sandbox's `placeholders`, until the returned handle is disposed. A path with whitespace is
   * not guarded (the watchdog reads lines); the next executor's cgroup sweep still kills what is
   * left in such a group.
   */
  protect(pgid: number, { groupProcsFiles = [], placeholders = [] }: GuardedPaths = {}): Disposable {
    if (process.platform === 'win32' || !Number.isSafeInteger(pgid) || pgid <= 1)
      return { [Symbol.dispose]() {} };
    this.#guarded.set(pgid, (this.#guarded.get(pgid) ?? 0) + 1);
    const paths = [
      ...groupProcsFiles.map((path) => ({ kind: 'cgroup' as const, path })),
      ...placeholders.map((path) => ({ kind: 'placeholder' as const, path })),
    ]
      .filter(({ path }) => !/\s/.test(path))
      .map((entry): GuardedPath => ({ id: this.#nextPathId++, ...entry }));
    for (const entry of paths) this.#paths.set(entry.id, entry);
    this.#send(`+${pgid}\n${paths.map(addLine).join('')}`);
    let disposed = false;
    return {
      [Symbol.dispose]: () => {
        if (disposed) return;
        disposed = true;
        const count = this.#guarded.get(pgid) ?? 1;
        if (count > 1) this.#guarded.set(pgid, count - 1);
        else this.#guarded.delete(pgid);
        for (const { id } of paths) this.#paths.delete(id);
        this.#send(`-${pgid}\n${paths.map(({ id, kind }) => `${PATH_LINES[kind].forget}${id}\n`).join('')}`);
      },
    };
  }

  /** The watchdog's pid, once started (for tests and diagnostics). */
  watchdogPid(): number | undefined {
    return this.#watchdog?.pid;
  }

  /**
   * Resolves once every line sent so far has left this process for the watchdog's pipe (what is
   * still queued here is lost if this process is killed).
   */
  async flushed(): Promise<void> {
    const stdin = this.#watchdog?.stdin;
    while (stdin && !stdin.destroyed && stdin.writableLength > 0) await once(stdin, 'drain');
  }

  #send(line: string): void {
    if (this.#broken) return;
    const stdin = this.#ensureWatchdog()?.stdin;
    stdin?.write(line);
  }

  #ensureWatchdog(): ChildProcess | undefined {
    if (this.#watchdog !== undefined) return this.#watchdog;
    let child: ChildProcess;
    try {
      // Its own session (detached): a signal to the server's process group does not reach it.
      child = spawn('/bin/sh', ['-c', WATCHDOG_SCRIPT], {
        stdio: ['pipe', 'ignore', 'ignore'],
        detached: true,
        env: { PATH: '/usr/bin:/bin' },
      });
    } catch {
      this.#broken = true;
      return undefined;
    }
    this.#watchdog = child;
    // Neither the watchdog nor its pipe may keep this process alive.
    child.unref();
    const stdin = child.stdin as Socket | null;
    stdin?.unref();
    stdin?.on('error', () => {});
    child.on('error', () => {
      this.#broken = true;
    });
    child.once('exit', () => {
      // Someone killed the watchdog: start a new one on next use and hand it every guarded group.
      if (this.#watchdog !== child) return;
      this.#watchdog = undefined;
      this.#restarts += 1;
      if (this.#restarts > MAX_WATCHDOG_RESTARTS) this.#broken = true;
      if (this.#broken || (this.#guarded.size === 0 && this.#paths.size === 0)) return;
      const lines: string[] = [];
      for (const [pgid, count] of this.#guarded) for (let i = 0; i < count; i++) lines.push(`+${pgid}\n`);
      for (const entry of this.#paths.values()) lines.push(addLine(entry));
      this.#ensureWatchdog()?.stdin?.write(lines.join(''));
    });
    return child;
  }
}

function addLine({ id, kind, path }: GuardedPath): string {
  return `${PATH_LINES[kind].add}${id} ${path}\n`;
}

/**
 * A launch result (`spawnProcess`'s) with its process guarded by {@link guardAgainstOrphans}:
 * its process group, its cgroup and its sandbox's placeholders.
 */
export function guardSpawned<T extends GuardableLaunch>(launched: T): T {
  return {
    ...launched,
    process: guardAgainstOrphans(launched.process, undefined, {
      groupProcsFiles: launched.cgroupProcsFiles,
      placeholders: launched.placeholders,
    }),
  };
}

/** What {@link guardSpawned} reads of a launch (a `SpawnResult` of `@execd/sandboxing`). */
export interface GuardableLaunch {
  readonly process: SpawnedProcess;
  readonly cgroupProcsFiles?: readonly string[] | undefined;
  readonly placeholders?: readonly string[] | undefined;
}

let shared: OrphanGuard | undefined;

/** The guard of this process (created on first use). */
export function processOrphanGuard(): OrphanGuard {
  shared ??= new OrphanGuard();
  return shared;
}

/**
 * Wraps a spawned child so that its process group (and its cgroup, `groupProcsFiles`, when it has
 * one, and its sandbox's `placeholders`) is guarded by {@link processOrphanGuard} from now until
 * `close()` has reaped it (the group may outlive the leader's exit until then). Limits: without a cgroup, a child that moves itself
 * into a new session of its own (`setsid` in a pipe child) is beyond reach; and a group id
 * released by the kernel but not yet by `close()` (up to the 30 s retention) could, after a pid
 * wrap-around, name someone else's group at the moment the server dies.
 */
export function guardAgainstOrphans(
  child: SpawnedProcess,
  guard: OrphanGuard = processOrphanGuard(),
  paths: GuardedPaths = {},
): SpawnedProcess {
  const protection = guard.protect(child.pid, paths);
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= child.close().finally(() => protection[Symbol.dispose]());
    return closing;
  };
  return {
    pid: child.pid,
    tty: child.tty,
    output: (): AsyncIterable<OutputChunk> => child.output(),
    write: (bytes: Uint8Array | string): Promise<void> => child.write(bytes),
    closeStdin: (): void => child.closeStdin(),
    resize: (cols: number, rows: number): void => child.resize(cols, rows),
    interrupt: (): void | Promise<void> => child.interrupt(),
    kill: (killSignal?: NodeJS.Signals): void => child.kill(killSignal),
    terminate: (options?: TerminateOptions): Promise<ExitStatus> => child.terminate(options),
    exited: child.exited,
    closed: child.closed,
    close,
    [Symbol.asyncDispose]: close,
  };
}
