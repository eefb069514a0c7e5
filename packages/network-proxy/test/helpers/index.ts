import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Origin, startTlsOrigin as startTlsOriginProcess } from '@execd/test-kit';

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

/**
 * A minimal bwrap sandbox (read-only root, own user/pid/ipc namespaces, no capabilities) for a
 * command run behind a bridge. No `--unshare-net`: the sandbox lives in the network namespace it
 * is started in, the bridge's (as `@execd/sandboxing` builds it for `proxied`).
 */
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
    '--proc',
    '/proc',
    '--cap-drop',
    'ALL',
    '--',
    ...command,
  ];
}

/** A real child process with collected output. */
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
