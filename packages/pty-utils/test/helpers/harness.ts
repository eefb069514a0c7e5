import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectGone, waitFor } from '@execd/test-kit';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { ForkServer, forkServerHelperProgram } from '../../src/fork-server/fork-server.ts';
import { isProcessAlive } from '../../src/process-group.ts';
import { spawnPipe } from '../../src/spawn-pipe.ts';
import { spawnPty } from '../../src/spawn-pty.ts';
import type {
  ExitStatus,
  OutputChunk,
  PipeSpawnOptions,
  PtySpawnOptions,
  SpawnedProcess,
} from '../../src/types.ts';

/** A small, explicit environment for children: no inheritance from the test runner. */
export function testEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: process.env.HOME ?? '/root',
    LANG: 'C.UTF-8',
    ...extra,
  };
}

const spawned: SpawnedProcess[] = [];
const tempDirs: string[] = [];

let forkServer: ForkServer | undefined;

/** The fork server's helpers (suites of their own behaviour run once per helper). */
export const FORK_SERVER_HELPERS = ['python', 'perl'] as const;

/** Whether this host has the program of a fork server helper (a trusted python3, or perl). */
export function hasForkServerHelper(helper: (typeof FORK_SERVER_HELPERS)[number]): boolean {
  return forkServerHelperProgram(helper) !== undefined;
}

/** The ways a child can be started: forked by this process, or by a fork server. */
export const SPAWNERS = ['this process', 'the fork server'] as const;

/**
 * In the enclosing `describe`, `pipe()` and `pty()` start children from a fork server (`the fork server`;
 * PTYs only where it is the Python helper) or by forking this process (`this process`). The server
 * is closed after the block.
 */
export function spawnFrom(spawner: (typeof SPAWNERS)[number]): void {
  if (spawner === 'this process') return;
  beforeAll(async () => {
    forkServer = await ForkServer.start();
    if (forkServer === undefined) throw new Error('the fork server cannot run here');
  });
  afterAll(async () => {
    await forkServer?.close();
    forkServer = undefined;
  });
}

/** `spawnPipe` with a test env and cwd; the process is checked for leaks after the test. */
export async function pipe(argv: string[], options: Partial<PipeSpawnOptions> = {}): Promise<SpawnedProcess> {
  const proc = await spawnPipe({ argv, cwd: tmpdir(), env: testEnv(), forkServer, ...options });
  spawned.push(proc);
  return proc;
}

/** `spawnPty` with a test env and cwd; the process is checked for leaks after the test. */
export async function pty(argv: string[], options: Partial<PtySpawnOptions> = {}): Promise<SpawnedProcess> {
  const proc = await spawnPty({ argv, cwd: tmpdir(), env: testEnv(), forkServer, ...options });
  spawned.push(proc);
  return proc;
}

/** A fresh temp directory, removed after the test. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'pty-utils-'));
  tempDirs.push(dir);
  return dir;
}

/** Reads the whole output, per stream. */
export async function collect(proc: SpawnedProcess): Promise<Record<'stdout' | 'stderr' | 'pty', string>> {
  const parts: Record<string, Uint8Array[]> = { stdout: [], stderr: [], pty: [] };
  for await (const chunk of proc.output()) parts[chunk.stream]?.push(chunk.bytes);
  const text = (name: string): string => Buffer.concat(parts[name] ?? []).toString('utf8');
  return { stdout: text('stdout'), stderr: text('stderr'), pty: text('pty') };
}

/** Live transcript of a child's output, for interactive tests: `await transcript.until('>>> ')`. */
export class Transcript {
  text = '';
  readonly chunks: OutputChunk[] = [];
  readonly done: Promise<void>;

  constructor(proc: SpawnedProcess) {
    this.done = (async () => {
      for await (const chunk of proc.output()) {
        this.chunks.push(chunk);
        this.text += Buffer.from(chunk.bytes).toString('utf8');
      }
    })();
  }

  /** Waits until the transcript (from `from` on) contains `needle`; returns the index after it. */
  async until(needle: string | RegExp, from = 0): Promise<number> {
    return waitFor(
      () => {
        const rest = this.text.slice(from);
        const match = typeof needle === 'string' ? rest.indexOf(needle) : rest.search(needle);
        return match >= 0 ? from + match + 1 : 0;
      },
      { what: `output ${String(needle)} (got ${JSON.stringify(this.text.slice(-200))})` },
    );
  }
}

/** Fields of /proc/<pid>/stat by their man-page names. */
export function procStat(pid: number | 'self'): {
  state: string;
  ppid: number;
  pgid: number;
  sid: number;
  ttyNr: number;
} {
  const text = readFileSync(`/proc/${pid}/stat`, 'latin1');
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return {
    state: f[0] ?? '',
    ppid: Number(f[1]),
    pgid: Number(f[2]),
    sid: Number(f[3]),
    ttyNr: Number(f[4]),
  };
}

/**
 * Waits until `pid` runs the program `name` (its exec is done). Signal tests need it: a shell
 * catches SIGINT and defers it while it forks, so an interrupt that lands mid-startup is swallowed.
 */
export async function waitForProgram(pid: number, name: string): Promise<void> {
  await waitFor(() => readFileSync(`/proc/${pid}/comm`, 'latin1').trim() === name, {
    what: `pid ${pid} running ${name}`,
  });
}

/**
 * After each test, closes what it spawned through {@link pipe} / {@link pty} (a test that failed
 * midway may leave children) and removes its temp dirs. The leak check of `@execd/test-kit`
 * (after every test in this package) then fails the test if any of those sessions still runs,
 * or a descendant, or an fd.
 */
export function closeSpawnedAfterEach(): void {
  afterEach(async () => {
    const procs = spawned.splice(0);
    try {
      expectGone(...procs.map((proc) => proc.pid));
      await Promise.all(procs.map((proc) => proc.close()));
    } finally {
      for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    }
  });
}

/**
 * Plain files standing in for a cgroup v1 group's `cgroup.procs` and `tasks` and for the spawning
 * thread's home `tasks`, so which way a child joins its groups shows without a cgroup.
 */
export function fakeGroup(): { procs: string; tasks: string; home: string } {
  const dir = tempDir();
  const files = {
    procs: join(dir, 'cgroup.procs'),
    tasks: join(dir, 'tasks'),
    home: join(dir, 'home-tasks'),
  };
  for (const file of Object.values(files)) writeFileSync(file, '');
  return files;
}

/**
 * `proc` prints the pid of a grandchild that keeps its output open: `closed` must come at the
 * drain cap with the grandchild alive, and `close()` must kill it. Resolves with the status.
 */
export async function expectClosedAtDrainCap(proc: SpawnedProcess): Promise<ExitStatus> {
  const transcript = new Transcript(proc);
  const status = await proc.closed;
  await transcript.done;
  const sleeper = Number(transcript.text.trim());
  expectGone(sleeper);
  expect(isProcessAlive(sleeper)).toBe(true);
  await proc.close();
  await waitFor(() => !isProcessAlive(sleeper), { what: 'grandchild killed by close()' });
  return status;
}
