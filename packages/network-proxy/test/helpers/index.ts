import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Origin, startTlsOrigin as startTlsOriginProcess } from '@execd/test-kit';

/** Polls `predicate` until it returns a truthy value or the deadline passes (then throws). */
export async function waitFor<T>(
  predicate: () => T | Promise<T>,
  options: { readonly timeoutMs?: number; readonly intervalMs?: number; readonly what?: string } = {},
): Promise<NonNullable<T>> {
  const { timeoutMs = 15_000, intervalMs = 20, what = 'condition' } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await predicate();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** True while a process with this pid exists and is not a zombie. */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** Pids of this process's live (non-zombie) children. */
export function childPids(): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) === process.pid && fields[0] !== 'Z') children.push(Number(entry));
    } catch {
      // the process went away while we looked
    }
  }
  return children;
}

/** Number of file descriptors this process has open. */
export function openFdCount(): number {
  return readdirSync('/proc/self/fd').length;
}

export { type Origin, startOrigin } from '@execd/test-kit';

/** Starts an HTTPS origin with the given certificate in a child process. */
export function startTlsOrigin(cert: Certificate): Promise<Origin> {
  return startTlsOriginProcess(cert);
}

/**
 * Starts a plain HTTP server in this process, i.e. on a port of the executor itself (the proxy
 * must refuse to reach it whatever the policy says).
 */
export async function startExecutorServer(host = '127.0.0.1'): Promise<Origin> {
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests++;
    res.end(`executor ${req.url}`);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  const close = async (): Promise<void> => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return {
    port,
    get requests() {
      return requests;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** A self-signed certificate (generated with openssl) and its files. */
export interface Certificate extends AsyncDisposable {
  readonly certPath: string;
  readonly keyPath: string;
  readonly cert: string;
  readonly key: string;
}

/** Generates a self-signed P-256 certificate for `names` with the openssl CLI. */
export async function makeCertificate(names: readonly string[]): Promise<Certificate> {
  const dir = await mkdtemp(join(tmpdir(), 'execd-netproxy-cert-'));
  const certPath = join(dir, 'cert.pem');
  const keyPath = join(dir, 'key.pem');
  const san = names.map((name) => `DNS:${name}`).join(',');
  const result = await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    '1',
    '-subj',
    `/CN=${names[0]}`,
    '-addext',
    `subjectAltName=${san}`,
    '-keyout',
    keyPath,
    '-out',
    certPath,
  ]);
  if (result.code !== 0) throw new Error(`openssl failed (${result.code}): ${result.stderr}`);
  const [cert, key] = await Promise.all([readFile(certPath, 'utf8'), readFile(keyPath, 'utf8')]);
  return {
    certPath,
    keyPath,
    cert,
    key,
    [Symbol.asyncDispose]: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Result of a finished command. */
export interface RunResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a program to completion without blocking the event loop (the proxy lives in this process). */
export function run(file: string, args: readonly string[], env?: NodeJS.ProcessEnv): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(
      file,
      [...args],
      { encoding: 'utf8', env: env ?? process.env, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** curl with a bounded time; `-sS` so errors reach stderr. */
export function curl(args: readonly string[]): Promise<RunResult> {
  return run('curl', ['-sS', '--max-time', '20', ...args]);
}

/** A bwrap argv like the sandboxing package builds for a restricted-network command (read-only root). */
export function bwrapArgv(command: readonly string[]): string[] {
  return [
    'bwrap',
    '--new-session',
    '--die-with-parent',
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--unshare-user',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-net',
    '--proc',
    '/proc',
    '--cap-drop',
    'ALL',
    '--',
    ...command,
  ];
}

/** A real child process with collected output, shaped for `spawnWithManagedNetwork`. */
export interface TestChild {
  readonly pid: number;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly process: ChildProcess;
  stdout(): string;
  stderr(): string;
}

/** Spawns `argv` on pipes (stdin /dev/null) in its own process group. */
export function spawnChild(request: {
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}): TestChild {
  const [file = '', ...args] = request.argv;
  const child = spawn(file, args, {
    env: { ...request.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (text: string) => {
    stdout += text;
  });
  child.stderr?.setEncoding('utf8').on('data', (text: string) => {
    stderr += text;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  return { pid: child.pid ?? -1, exited, process: child, stdout: () => stdout, stderr: () => stderr };
}

/** The environment for sandboxed test commands: a PATH and nothing else. */
export const BASE_ENV: Readonly<Record<string, string>> = {
  PATH: '/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin',
};
