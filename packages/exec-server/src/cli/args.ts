import { ExecError } from '@execd/protocol';
import { isLogLevel, type LogLevel } from '../server/logger.ts';

/** The parsed command line of `execd-server`. */
export interface ExecServerCliArgs {
  readonly listen: string | undefined;
  /** `--connect URL`: dial the host instead of listening (reverse connection). */
  readonly connect: string | undefined;
  readonly connectTokenFile: string | undefined;
  readonly environmentId: string | undefined;
  /** `--health-listen URL`: with --connect, serve /readyz and /metrics on `http://IP:PORT`. */
  readonly healthListen: string | undefined;
  readonly concurrentRequests: string | undefined;
  readonly authTokenFile: string | undefined;
  /** Every `--allowed-host` value, in order (the flag may repeat; a value may list names with commas). */
  readonly allowedHosts: readonly string[];
  /** `--local-peer-check`: `sandboxed-only` (default), `strict` or `off`. */
  readonly localPeerCheck: 'strict' | 'sandboxed-only' | 'off' | undefined;
  readonly logLevel: LogLevel | 'off';
  readonly help: boolean;
  readonly version: boolean;
  /** `--require-sandbox`: probe bubblewrap at start; `/readyz` answers 503 while it does not work. */
  readonly requireSandbox: boolean;
  /** `--prepare-sandboxes`: start a repeating kind of sandboxed command's next sandbox ahead of it. */
  readonly prepareSandboxes: boolean;
  /** False with `--no-fork-server`: the server forks every command itself. */
  readonly forkServer: boolean;
}

/** The `--help` text. */
export const USAGE: string = `Usage: execd-server [options]

Options:
  --listen URL                 ws://IP:PORT or ws://localhost:PORT (default ws://127.0.0.1:0),
                               stdio or stdio://
  --connect URL                ws://HOST:PORT/PATH or wss://…: dial the host instead of
                               listening, serve the protocol on that socket and redial when
                               it drops (executors behind NAT); excludes --listen
  --connect-token-file PATH    with --connect: send "Authorization: Bearer <token>" (from PATH)
  --environment-id ID          with --connect: sent as X-Execd-Environment-Id (host routing)
  --health-listen URL          with --connect: serve GET /readyz (503 while not connected to
                               the host) and GET /metrics on http://IP:PORT (port 0: any);
                               --auth-token-file, --allowed-host and --local-peer-check apply
                               to it
  --concurrent-requests N      1 (default) runs each connection's requests in order;
                               N >= 2 runs up to N control and N ordinary requests at once
  --auth-token-file PATH       require "Authorization: Bearer <token>" (token read from PATH);
                               EXECD_AUTH_TOKEN is used when this is not given
  --allowed-host NAME          also answer requests whose Host is NAME (or, for .NAME, any name
                               under it) besides IP literals and localhost; repeatable
  --local-peer-check MODE      connections from this machine: sandboxed-only (default) refuses
                               sandboxed processes; strict also refuses loopback peers whose
                               process cannot be found; off
  --log-level LEVEL            trace, debug, info (default), warn, error or off; logs go to stderr
  --require-sandbox            probe the sandbox (bubblewrap) at start: /readyz answers 503,
                               saying why, when sandboxed commands cannot run
  --prepare-sandboxes          after a sandboxed command of a kind that repeats, start the
                               next sandbox of its kind and keep it waiting (up to 60 s): the
                               next such command starts in ~1/3 of the time; a waiting sandbox
                               holds its workspace's empty .git/.codex/.agents mount points
  --no-fork-server             fork every command from the server itself (by default commands
                               are started by a small helper process, so a large server is
                               not copied for each: on pipes with python3 or perl, in a
                               terminal with python3; else it forks)
  -h, --help                   show this help
  -V, --version                print the version

Prints exactly one line, ws://IP:PORT, on stdout once listening (WebSocket mode); with
--connect, nothing (it logs "connected to the host" on stderr at each dial, and the health
endpoint's URL as "health endpoints listening").
`;

const VALUE_FLAGS = [
  '--listen',
  '--connect',
  '--connect-token-file',
  '--environment-id',
  '--health-listen',
  '--concurrent-requests',
  '--auth-token-file',
  '--allowed-host',
  '--local-peer-check',
  '--log-level',
] as const;
type ValueFlag = (typeof VALUE_FLAGS)[number];

/**
 * `ws://localhost:PORT` as `ws://127.0.0.1:PORT`: the server itself takes IP literals only (as
 * the original), but people type `localhost`. Other names stay refused (which address would it be?).
 */
function loopbackByName(listen: string | undefined): string | undefined {
  const match = listen === undefined ? null : /^ws:\/\/localhost(:[0-9]{1,5})$/i.exec(listen);
  if (match === null) return listen;
  return `ws://127.0.0.1${match[1]}`;
}

/** Parses `argv` (without node and the script). Throws `ExecError` (`invalidParams`) on bad usage. */
export function parseCliArgs(argv: readonly string[]): ExecServerCliArgs {
  const values = new Map<ValueFlag, string>();
  const allowedHosts: string[] = [];
  let help = false;
  let version = false;
  let requireSandbox = false;
  let prepareSandboxes = false;
  let forkServer = true;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '-h' || arg === '--help') {
      help = true;
      continue;
    }
    if (arg === '-V' || arg === '--version') {
      version = true;
      continue;
    }
    if (arg === '--require-sandbox') {
      requireSandbox = true;
      continue;
    }
    if (arg === '--prepare-sandboxes') {
      prepareSandboxes = true;
      continue;
    }
    if (arg === '--no-fork-server') {
      forkServer = false;
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq >= 0 ? arg.slice(0, eq) : arg;
    if (!(VALUE_FLAGS as readonly string[]).includes(name)) {
      throw new ExecError('invalidParams', `unexpected argument \`${arg}\``);
    }
    let value: string | undefined;
    if (eq >= 0) value = arg.slice(eq + 1);
    else {
      value = argv[i + 1];
      i++;
    }
    if (value === undefined) throw new ExecError('invalidParams', `${name} needs a value`);
    if (name === '--allowed-host') {
      allowedHosts.push(...value.split(',').filter((host) => host.trim() !== ''));
      continue;
    }
    values.set(name as ValueFlag, value);
  }
  const localPeerCheck = values.get('--local-peer-check');
  if (localPeerCheck !== undefined && !['strict', 'sandboxed-only', 'off'].includes(localPeerCheck)) {
    throw new ExecError(
      'invalidParams',
      `invalid --local-peer-check \`${localPeerCheck}\`; expected sandboxed-only, strict or off`,
    );
  }
  if (values.has('--connect') && values.has('--listen')) {
    throw new ExecError('invalidParams', '--connect and --listen cannot be used together');
  }
  for (const flag of ['--connect-token-file', '--environment-id', '--health-listen'] as const) {
    if (values.has(flag) && !values.has('--connect')) {
      throw new ExecError('invalidParams', `${flag} needs --connect`);
    }
  }
  const logLevel = values.get('--log-level') ?? 'info';
  if (!isLogLevel(logLevel)) {
    throw new ExecError(
      'invalidParams',
      `invalid --log-level \`${logLevel}\`; expected trace, debug, info, warn, error or off`,
    );
  }
  return {
    listen: loopbackByName(values.get('--listen')),
    connect: values.get('--connect'),
    connectTokenFile: values.get('--connect-token-file'),
    environmentId: values.get('--environment-id'),
    healthListen: values.get('--health-listen'),
    concurrentRequests: values.get('--concurrent-requests'),
    authTokenFile: values.get('--auth-token-file'),
    allowedHosts,
    localPeerCheck: localPeerCheck as ExecServerCliArgs['localPeerCheck'],
    logLevel,
    help,
    version,
    requireSandbox,
    prepareSandboxes,
    forkServer,
  };
}
