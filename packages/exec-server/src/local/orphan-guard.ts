import { type ChildProcess, spawn } from 'node:child_process';
import type { Socket } from 'node:net';
import type { ExitStatus, OutputChunk, SpawnedProcess, TerminateOptions } from '@execd/pty-utils';

/**
 * The watchdog: a POSIX shell that reads `+ID` / `-ID` lines (process groups to guard or to
 * forget) and `>FILE` / `<FILE` lines (a command cgroup's `cgroup.procs` to guard or to forget) on
 * stdin. At EOF, which the kernel delivers when every holder of the pipe's write end is gone,
 * i.e. when the server died, however it died (SIGKILL included), it SIGKILLs every process listed
 * in a guarded cgroup (a `setsid` daemon is still there: no group or session reaches it; read
 * again a few times for children forked meanwhile), every guarded process group, then (Linux)
 * every other process of the guarded sessions (a PTY shell's background jobs live in other
 * groups of the same session). Node cannot set `PR_SET_PDEATHSIG`, and a child that neither
 * writes to its pipes nor minds SIGHUP would otherwise outlive the server.
 */
const WATCHDOG_SCRIPT = `trap '' HUP INT TERM PIPE
set -f
g=' '
c=' '
while IFS= read -r l; do
  case $l in
    +*) g="$g\${l#+} " ;;
    -*) i=\${l#-}; case $g in *" $i "*) g="\${g%% $i *} \${g#* $i }" ;; esac ;;
    \\>*) c="$c\${l#>} " ;;
    \\<*) i=\${l#<}; case $c in *" $i "*) c="\${c%% $i *} \${c#* $i }" ;; esac ;;
  esac
done
[ "$g" = ' ' ] && [ "$c" = ' ' ] && exit 0
for f in $c; do
  for r in 1 2 3 4 5; do
    while read -r p; do kill -KILL "$p" 2>/dev/null; done < "$f" 2>/dev/null || break
  done
done
for i in $g; do kill -KILL -- "-$i" 2>/dev/null; done
[ -d /proc/self ] || exit 0
set +f
for s in /proc/[0-9]*/stat; do
  read -r l < "$s" 2>/dev/null || continue
  set -f; set -- \${l##*) }; set +f
  case $g in *" $4 "*) p=\${s#/proc/}; kill -KILL "\${p%/stat}" 2>/dev/null ;; esac
done
`;

/** A watchdog that keeps dying is given up on (guarding is best effort, never a crash loop). */
const MAX_WATCHDOG_RESTARTS = 3;

/**
 * Kills the process groups of this process's children when this process dies without cleaning
 * up (SIGKILL, OOM killer, crash). One watchdog process per Node process, started on first use;
 * it does not keep the event loop alive. No-op on Windows.
 */
export class OrphanGuard {
  readonly #guarded = new Set<number>();
  /** Guarded cgroup.procs files (each command's group is its own). */
  readonly #groupFiles = new Set<string>();
  #watchdog: ChildProcess | undefined;
  #broken = false;
  #restarts = 0;

  /**
   * Guards process group `pgid`, and the processes listed in `groupProcsFiles` (the command's
   * cgroup, where its daemons in sessions of their own still are), until the returned handle is
   * disposed. A path with whitespace is not guarded (the watchdog splits on it); the next
   * executor's cgroup sweep still kills what is left there.
   */
  protect(pgid: number, groupProcsFiles: readonly string[] = []): Disposable {
    if (process.platform === 'win32' || !Number.isSafeInteger(pgid) || pgid <= 1)
      return { [Symbol.dispose]() {} };
    this.#guarded.add(pgid);
    this.#send(`+${pgid}\n`);
    const files = groupProcsFiles.filter((file) => !/\s/.test(file));
    for (const file of files) {
      this.#groupFiles.add(file);
      this.#send(`>${file}\n`);
    }
    let disposed = false;
    return {
      [Symbol.dispose]: () => {
        if (disposed) return;
        disposed = true;
        this.#guarded.delete(pgid);
        this.#send(`-${pgid}\n`);
        for (const file of files) {
          this.#groupFiles.delete(file);
          this.#send(`<${file}\n`);
        }
      },
    };
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
      if (this.#broken || (this.#guarded.size === 0 && this.#groupFiles.size === 0)) return;
      const replacement = this.#ensureWatchdog();
      for (const pgid of this.#guarded) replacement?.stdin?.write(`+${pgid}\n`);
      for (const file of this.#groupFiles) replacement?.stdin?.write(`>${file}\n`);
    });
    return child;
  }
}

let shared: OrphanGuard | undefined;

/** The guard of this process (created on first use). */
export function processOrphanGuard(): OrphanGuard {
  shared ??= new OrphanGuard();
  return shared;
}

/**
 * Wraps a spawned child so that its process group (and its cgroup, `groupProcsFiles`, when it has
 * one) is guarded by {@link processOrphanGuard} from now until `close()` has reaped it (the group
 * may outlive the leader's exit until then). Limits: without a cgroup, a child that moves itself
 * into a new session of its own (`setsid` in a pipe child) is beyond reach; and a group id
 * released by the kernel but not yet by `close()` (up to the 30 s retention) could, after a pid
 * wrap-around, name someone else's group at the moment the server dies.
 */
export function guardAgainstOrphans(
  child: SpawnedProcess,
  guard: OrphanGuard = processOrphanGuard(),
  groupProcsFiles: readonly string[] = [],
): SpawnedProcess {
  const protection = guard.protect(child.pid, groupProcsFiles);
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
