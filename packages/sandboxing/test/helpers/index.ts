import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxParam, SandboxType } from '@execd/protocol';
import type { ForkServer } from '@execd/pty-utils';
import {
  type CommandOutput,
  locateBwrap,
  type ResolvePolicyOptions,
  type SpawnResult,
  sandboxFromContext,
  spawnProcess,
} from '../../src/index.ts';

/** Fails (never skips) when bubblewrap is missing: these tests exist to run the real thing. */
export function requireBwrap(): string {
  const path = locateBwrap();
  if (path === undefined) {
    throw new Error(
      'bubblewrap (bwrap) is required on PATH for the sandboxing tests: install the bubblewrap package',
    );
  }
  return path;
}

/** A temporary directory (canonical path) removed on dispose. */
export interface TempDir extends Disposable {
  readonly path: string;
}

/** Creates a {@link TempDir} under `parent` (default: the OS temp dir). */
export function tempDir(prefix: string = 'execd-sbx-', parent: string = tmpdir()): TempDir {
  const path = realpathSync(mkdtempSync(join(parent, prefix)));
  return { path, [Symbol.dispose]: () => rmSync(path, { recursive: true, force: true }) };
}

/** A child environment with just what the tools need. */
export function childEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: homedir(), LANG: 'C.UTF-8', ...extra };
}

/** The result of one finished sandboxed command. */
export interface RunResult extends CommandOutput {
  readonly sandboxType: SandboxType;
}

/** Options of {@link runSandboxed}. */
export interface RunOptions {
  readonly cwd: string;
  readonly context?: SandboxParam | undefined;
  /** How the context is resolved (default: an empty environment: no `TMPDIR`, no `HOME`). */
  readonly resolve?: ResolvePolicyOptions;
  readonly env?: Record<string, string>;
  readonly bwrapSearchPath?: string;
  /** Start it from this fork server's helper instead of forking the test worker. */
  readonly forkServer?: ForkServer | undefined;
}

/** Launches a sandboxed process (pipes, or a PTY). */
export async function startSandboxed(
  command: readonly string[],
  options: RunOptions & { readonly tty?: boolean; readonly stdinOpen?: boolean },
): Promise<SpawnResult> {
  return spawnProcess({
    command,
    cwd: options.cwd,
    env: options.env ?? childEnv(),
    sandbox: sandboxFromContext(
      options.context ?? { profile: 'workspace-write' },
      options.cwd,
      options.resolve ?? { env: {} },
    ),
    tty: options.tty ?? false,
    stdinOpen: options.stdinOpen ?? false,
    bwrapSearchPath: options.bwrapSearchPath,
    forkServer: options.forkServer,
  });
}

/**
 * Runs `bash -c script` in the sandbox (default: workspace-write on `cwd`, on pipes) and collects
 * its output (in a terminal, `stdout` has it all).
 */
export async function runSandboxed(
  script: string,
  options: RunOptions & { readonly tty?: boolean },
): Promise<RunResult> {
  const { process: child, sandboxType } = await startSandboxed(['/bin/bash', '-c', script], options);
  await using _ = child;
  const decoder = { stdout: new TextDecoder(), stderr: new TextDecoder(), pty: new TextDecoder() };
  let stdout = '';
  let stderr = '';
  let aggregated = '';
  for await (const chunk of child.output()) {
    const text = decoder[chunk.stream].decode(chunk.bytes, { stream: true });
    if (chunk.stream === 'stderr') stderr += text;
    else stdout += text;
    aggregated += text;
  }
  const { exitCode } = await child.closed;
  return { exitCode, stdout, stderr, aggregated, sandboxType };
}

/** A live host process, as /proc shows it. */
export interface ProcEntry {
  readonly pid: number;
  readonly ppid: number;
  readonly session: number;
  readonly cmdline: string;
}

/** Live (non-zombie) host processes. */
export function procEntries(): ProcEntry[] {
  const entries: ProcEntry[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] === 'Z' || fields[0] === 'X') continue;
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'latin1').replaceAll('\0', ' ').trim();
      entries.push({ pid, ppid: Number(fields[1]), session: Number(fields[3]), cmdline });
    } catch {
      // The process exited while we looked.
    }
  }
  return entries;
}

/** Live host processes running exactly `sleep <marker>`, wherever they were reparented. */
export function sleepPids(marker: string): number[] {
  return procEntries()
    .filter((entry) => entry.cmdline === `sleep ${marker}`)
    .map((entry) => entry.pid);
}

/** A marker unlikely to appear anywhere else: a sleep duration with random decimals. */
export function sleepMarker(): string {
  return `${100000 + Math.floor(Math.random() * 100000)}.${Math.floor(Math.random() * 1e6)}`;
}
