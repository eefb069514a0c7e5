// The one leak check of every test folder (wired by ./setup.ts): after a test file, and in
// packages that ask for it after each test, nothing the tests started may still run and the
// worker's file descriptors must be back to where they were.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { cmdline, descendants, openFds, type ProcStat, procStat, sessionMembers } from './procfs.ts';
import { waitFor } from './wait-for.ts';

/**
 * Children that live as long as the test worker by design: neither they nor the pipes to them
 * are leaks. Each is started on first use and never stopped.
 */
const WORKER_LIFETIME_HELPERS: readonly { readonly what: string; readonly cmdline: RegExp }[] = [
  // packages/exec-server/src/local/orphan-guard.ts: one per process that spawned children.
  { what: "the exec-server's orphan-guard watchdog", cmdline: /^\/bin\/sh -c trap '' HUP INT TERM PIPE/ },
  // tsup (a CLI under test built from source) keeps esbuild's service child for the process.
  { what: "esbuild's build service", cmdline: /\besbuild --service=/ },
];

/**
 * Fds a package keeps open for the life of the process by design, by what they point at.
 */
const WORKER_LIFETIME_FDS: readonly { readonly what: string; readonly target: RegExp }[] = [
  // packages/sandboxing/src/linux/seccomp-fd.ts: one unnamed (O_TMPFILE, or created and
  // unlinked) file per distinct seccomp filter, opened on first use and kept.
  {
    what: "sandboxing's seccomp filter cache",
    target: /\/(?:#\d+|execd-seccomp-[^/]+\/filter\.bpf) \(deleted\)$/,
  },
  // libuv opens one inotify descriptor at the first `fs.watch` (exec-server's `fs/watchMissing`)
  // and keeps it for the event loop's life, however many watchers come and go.
  { what: "libuv's inotify descriptor", target: /^anon_inode:inotify$/ },
];

/**
 * Threads a package keeps while it has work for them, by the name they give themselves
 * (`/proc/self/task/N/comm`), and how many fds each holds: a Node 20 worker thread's event loop
 * is an epoll instance, an eventfd and a pipe pair. Not leaks: each ends on its own when idle.
 */
const WORKER_THREADS: readonly { readonly what: string; readonly comm: string; readonly fds: number }[] = [
  // packages/sandboxing/src/nested-scan.ts: lists folders for sandbox plans, ends 30 s after its
  // last scan.
  { what: "sandboxing's folder-scan worker", comm: 'execd-fscan', fds: 4 },
];

/**
 * How long a check waits for processes to exit. Generous: SIGKILL is delivered asynchronously,
 * a sandbox tears down its namespaces, and the machine is shared (the old checkers used 10-20 s).
 */
export const LEAK_PROCESS_TIMEOUT_MS = 15_000;

/**
 * How long a check waits for file descriptors to close: longer than the 5 s after which Node's
 * keep-alive agents drop an idle connection.
 */
export const LEAK_FD_TIMEOUT_MS = 10_000;

/** Poll interval of the checks: each poll reads the whole of /proc. */
const LEAK_POLL_INTERVAL_MS = 50;

/** What the test worker had when a test (or a test file) began. */
export interface LeakBaseline {
  /** Descendants of the worker then (allowed to live on: a `beforeAll` started them). */
  readonly pids: ReadonlySet<number>;
  /** Open fds then, by number, and what each pointed at. */
  readonly fds: ReadonlyMap<number, string>;
  /** The fd count then, the fds kept for the worker's life (helper pipes, caches) left out. */
  readonly fdCount: number;
}

/** Pids registered by {@link expectGone} outside a test (a `beforeAll`): the file's. */
const fileTracked = new Set<number>();
/** Pids registered during the running test, when the setup checks after each test. */
let testTracked: Set<number> | undefined;

/**
 * Registers processes that must be gone, each with every member of its session (wherever they
 * were re-parented), at the next leak check: after the current test (or, registered outside a
 * test, after the test file). For children that lead their own session, whose leftovers are no
 * longer descendants of the worker.
 */
export function expectGone(...pids: number[]): void {
  const into = testTracked ?? fileTracked;
  for (const pid of pids) if (Number.isSafeInteger(pid) && pid > 0) into.add(pid);
}

/** For ./setup.ts: from now until {@link endTestTracking}, {@link expectGone} registers for the test. */
export function beginTestTracking(): void {
  testTracked = new Set();
}

/** For ./setup.ts: the test is over (checked or not); forget what it registered. */
export function endTestTracking(): void {
  testTracked = undefined;
}

/** For ./setup.ts: the file is over; forget everything registered. */
export function forgetTracked(): void {
  testTracked = undefined;
  fileTracked.clear();
}

/** Which registered pids a check looks at: the running test's only, or all. */
export type TrackedScope = 'test' | 'all';

function trackedPids(scope: TrackedScope): number[] {
  return scope === 'test' ? [...(testTracked ?? [])] : [...fileTracked, ...(testTracked ?? [])];
}

function isWorkerHelper(stat: ProcStat): boolean {
  if (stat.state === 'Z') return false;
  const line = cmdline(stat.pid);
  return WORKER_LIFETIME_HELPERS.some((helper) => helper.cmdline.test(line));
}

function describeProcess(stat: ProcStat): string {
  if (stat.state === 'Z') return `${stat.pid} (${stat.comm}: exited, never reaped by ${stat.ppid})`;
  return `${stat.pid} ${cmdline(stat.pid).slice(0, 160) || `(${stat.comm})`}`;
}

/** The processes registered with {@link expectGone}, or members of their sessions, still running. */
function trackedLeftovers(scope: TrackedScope = 'all'): Map<number, ProcStat> {
  const found = new Map<number, ProcStat>();
  for (const pid of trackedPids(scope)) {
    const stat = procStat(pid);
    if (stat !== undefined && stat.state !== 'Z') found.set(pid, stat);
    for (const member of sessionMembers(pid)) found.set(member.pid, member);
  }
  return found;
}

/** Pids of the processes registered with {@link expectGone} (and of their sessions) still running. */
export function trackedSurvivors(): number[] {
  return [...trackedLeftovers().keys()];
}

/**
 * Waits (bounded) until every process registered with {@link expectGone}, and every member of
 * its session, is gone; throws naming the survivors. For a test that asserts it midway.
 */
export async function expectTrackedGone(timeoutMs: number = LEAK_PROCESS_TIMEOUT_MS): Promise<void> {
  try {
    await waitFor(() => trackedLeftovers().size === 0, {
      timeoutMs,
      intervalMs: LEAK_POLL_INTERVAL_MS,
      what: 'tracked processes to exit',
    });
  } catch (error) {
    const left = [...trackedLeftovers().values()].map(describeProcess);
    if (left.length > 0) throw new Error(`processes survived:\n  ${left.join('\n  ')}`, { cause: error });
  }
}

/** The worker's descendants not in `baseline` and the tracked processes, still there. */
function leftoverProcesses(baseline: LeakBaseline, scope: TrackedScope): string[] {
  const found = new Map<number, string>();
  for (const stat of descendants(process.pid)) {
    if (!baseline.pids.has(stat.pid) && !isWorkerHelper(stat)) found.set(stat.pid, describeProcess(stat));
  }
  for (const [pid, stat] of trackedLeftovers(scope))
    if (!found.has(pid)) found.set(pid, describeProcess(stat));
  return [...found.values()];
}

/**
 * How many of this process's fds it keeps for its life: pipes to a worker-lifetime helper and
 * caches. A helper's stdio pipe is a socketpair (libuv), whose two ends have different inodes,
 * so those are counted (one per helper stdio end that is a socket this process does not share)
 * rather than named.
 */
function workerLifetimeFdCount(fds: ReadonlyMap<number, string>): number {
  const ours = new Set(fds.values());
  const helperTargets = new Set<string>();
  let socketPairs = 0;
  for (const stat of descendants(process.pid)) {
    if (!isWorkerHelper(stat)) continue;
    for (const fd of [0, 1, 2]) {
      let target: string;
      try {
        target = readlinkSync(`/proc/${stat.pid}/fd/${fd}`);
      } catch {
        continue; // closed, or the helper exited while we looked
      }
      if (target.startsWith('pipe:')) helperTargets.add(target);
      else if (target.startsWith('socket:') && !ours.has(target)) socketPairs++;
    }
  }
  let kept = socketPairs + workerThreadFdCount();
  for (const target of fds.values()) {
    if (helperTargets.has(target) || WORKER_LIFETIME_FDS.some((cache) => cache.target.test(target))) kept++;
  }
  return kept;
}

/** The fds held by this process's named worker threads (see {@link WORKER_THREADS}). */
function workerThreadFdCount(): number {
  let count = 0;
  for (const task of readdirSync('/proc/self/task')) {
    let comm: string;
    try {
      comm = readFileSync(`/proc/self/task/${task}/comm`, 'utf8').trim();
    } catch {
      continue; // the thread ended while we looked
    }
    count += WORKER_THREADS.find((thread) => thread.comm === comm)?.fds ?? 0;
  }
  return count;
}

/** Snapshot of what the worker has now: the baseline of a test or a test file. */
export function takeLeakBaseline(): LeakBaseline {
  const fds = openFds('self');
  return {
    pids: new Set(descendants(process.pid).map((stat) => stat.pid)),
    fds,
    fdCount: fds.size - workerLifetimeFdCount(fds),
  };
}

/** The fds open now beyond the baseline's count, or undefined when the count is back. */
function leftoverFds(baseline: LeakBaseline): string[] | undefined {
  const fds = openFds('self');
  const count = fds.size - workerLifetimeFdCount(fds);
  if (count <= baseline.fdCount) return undefined;
  const fresh: string[] = [];
  for (const [fd, target] of fds) if (baseline.fds.get(fd) !== target) fresh.push(`fd ${fd} -> ${target}`);
  return [`${count} open, ${baseline.fdCount} before; not there before:`, ...fresh];
}

/** Options of {@link expectNoLeaks}. */
export interface LeakCheckOptions {
  /** Who leaked, for the error: `the test`, `the test file`. */
  readonly scope: string;
  /**
   * Which processes registered with {@link expectGone} must be gone: `all` (default), or `test`,
   * those registered during the running test (the check after each test).
   */
  readonly tracked?: TrackedScope;
  /** Default {@link LEAK_PROCESS_TIMEOUT_MS}. */
  readonly processTimeoutMs?: number;
  /** Default {@link LEAK_FD_TIMEOUT_MS}. */
  readonly fdTimeoutMs?: number;
}

/**
 * Waits (bounded) until no process started since `baseline` runs or waits to be reaped (worker
 * helpers aside), no process registered with {@link expectGone} or member of its session runs,
 * and the fd count is back to the baseline's. Throws naming the pids and command lines, or the
 * fds and what they point at.
 */
export async function expectNoLeaks(baseline: LeakBaseline, options: LeakCheckOptions): Promise<void> {
  try {
    await waitFor(() => leftoverProcesses(baseline, options.tracked ?? 'all').length === 0, {
      timeoutMs: options.processTimeoutMs ?? LEAK_PROCESS_TIMEOUT_MS,
      intervalMs: LEAK_POLL_INTERVAL_MS,
      what: 'processes to exit',
    });
  } catch (error) {
    const left = leftoverProcesses(baseline, options.tracked ?? 'all');
    if (left.length > 0) {
      throw new Error(`processes outlived ${options.scope}:\n  ${left.join('\n  ')}`, { cause: error });
    }
  }
  try {
    await waitFor(() => leftoverFds(baseline) === undefined, {
      timeoutMs: options.fdTimeoutMs ?? LEAK_FD_TIMEOUT_MS,
      intervalMs: LEAK_POLL_INTERVAL_MS,
      what: 'file descriptors to close',
    });
  } catch (error) {
    const left = leftoverFds(baseline);
    if (left !== undefined) {
      throw new Error(`file descriptors outlived ${options.scope}: ${left.join('\n  ')}`, { cause: error });
    }
  }
}
