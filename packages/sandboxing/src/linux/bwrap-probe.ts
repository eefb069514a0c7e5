import { spawn } from 'node:child_process';
import { ExecError } from '@execd/protocol';
import { buildBwrapArgs } from './bwrap-args.ts';
import { LAUNCHER_ENV, SECCOMP_FD, withLauncher } from './launcher.ts';
import { seccompFilterPath } from './seccomp-fd.ts';
import { buildSeccompFilter, type SeccompArch, seccompArchOf } from './seccomp-filter.ts';

/**
 * How long a probe may take. Generous: it is one bubblewrap start (a few ms) on an idle
 * machine, but a loaded 2-core box can stall a fork for seconds; a hung probe must still end.
 */
export const BWRAP_PROBE_TIMEOUT_MS = 20_000;

/** Enough of a probe's stdout/stderr to classify it: bubblewrap's `--help` is ~5 KiB, its errors one line. */
const PROBE_OUTPUT_MAX_BYTES = 65_536;

/** What a working bubblewrap on this host supports. */
export interface BwrapCapabilities {
  /** Canonical path of the bubblewrap binary. */
  readonly path: string;
  /** The seccomp syscall table in use. */
  readonly arch: SeccompArch;
  /** A fresh procfs can be mounted (false: the original's `--no-proc` fallback). */
  readonly mountProc: boolean;
  /** `--disable-userns` is supported (bubblewrap 0.8+). */
  readonly disableUserns: boolean;
  /** `--argv0` is supported (bubblewrap 0.9+). */
  readonly argv0: boolean;
}

interface RunResult {
  readonly exitCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function run(argv: readonly string[], timeoutMs: number): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...LAUNCHER_ENV },
      timeout: timeoutMs,
      killSignal: 'SIGKILL',
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      if (stdout.length < PROBE_OUTPUT_MAX_BYTES) stdout += text;
    });
    child.stderr.setEncoding('utf8').on('data', (text: string) => {
      if (stderr.length < PROBE_OUTPUT_MAX_BYTES) stderr += text;
    });
    child.once('error', reject);
    // `exit`, not `close`: a descendant that inherited stderr must not hold the probe open.
    child.once('exit', (exitCode) => {
      child.stdout.destroy();
      child.stderr.destroy();
      resolve({ exitCode, stdout, stderr });
    });
  });
}

function unsupported(message: string, cause?: unknown): ExecError {
  return new ExecError('unsupported', message, cause === undefined ? undefined : { cause });
}

/** True when bubblewrap's stderr says user namespaces cannot be created here. */
export function isUserNamespaceFailure(stderr: string): boolean {
  return /new namespace|uid map|gid map|setgroups|unshare|user namespace|no permissions to creat/i.test(
    stderr,
  );
}

async function tryRun(
  path: string,
  caps: Omit<BwrapCapabilities, 'path'>,
  timeoutMs: number,
): Promise<RunResult> {
  const filter = buildSeccompFilter({
    arch: caps.arch,
    networkDisabled: true,
    denyUserNamespaces: !caps.disableUserns,
  });
  const flags = buildBwrapArgs({
    plan: { fullDiskWrite: false, writableRoots: [], cwd: '/' },
    networkDisabled: true,
    newSession: true,
    mountProc: caps.mountProc,
    disableUserns: caps.disableUserns,
    seccompFd: SECCOMP_FD,
  });
  const argv = withLauncher(seccompFilterPath(filter), [path, ...flags, '/bin/sh', '-c', 'exit 0']);
  return run(argv, timeoutMs);
}

async function probe(path: string, timeoutMs: number): Promise<BwrapCapabilities> {
  const arch = seccompArchOf();
  if (arch === undefined) throw unsupported(`no seccomp syscall table for architecture ${process.arch}`);
  let help: RunResult;
  try {
    help = await run([path, '--help'], timeoutMs);
  } catch (error) {
    throw unsupported(`bubblewrap at ${path} cannot be run`, error);
  }
  const caps = {
    arch,
    mountProc: true,
    disableUserns: help.stdout.includes('--disable-userns'),
    argv0: help.stdout.includes('--argv0'),
  };
  let result = await tryRun(path, caps, timeoutMs);
  if (result.exitCode !== 0 && /can't mount proc/i.test(result.stderr)) {
    caps.mountProc = false;
    result = await tryRun(path, caps, timeoutMs);
  }
  if (result.exitCode === 0) return { path, ...caps };
  const detail =
    result.stderr.trim() ||
    (result.exitCode === null ? `no answer within ${timeoutMs} ms` : `exit code ${result.exitCode}`);
  if (isUserNamespaceFailure(result.stderr)) {
    throw unsupported(`bubblewrap cannot create user namespaces on this host (${detail})`);
  }
  throw unsupported(`bubblewrap at ${path} does not work on this host (${detail})`);
}

/** Options of {@link probeBwrap}. */
export interface BwrapProbeOptions {
  /** Give up on a bubblewrap that does not answer (default {@link BWRAP_PROBE_TIMEOUT_MS}); the first probe of a path decides. */
  readonly timeoutMs?: number;
}

const probes = new Map<string, Promise<BwrapCapabilities>>();

/**
 * Checks once per bubblewrap path (cached, also when it fails) that it can run a sandbox the
 * way execd builds one: user/pid/net namespaces, procfs, the seccomp filter. Rejects with an
 * `unsupported` ExecError that says what is wrong, instead of letting every command fail oddly.
 */
export function probeBwrap(path: string, options: BwrapProbeOptions = {}): Promise<BwrapCapabilities> {
  let pending = probes.get(path);
  if (pending === undefined) {
    pending = probe(path, options.timeoutMs ?? BWRAP_PROBE_TIMEOUT_MS);
    probes.set(path, pending);
  }
  return pending;
}
