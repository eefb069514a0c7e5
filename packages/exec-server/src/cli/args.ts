import { ExecError } from '@execd/protocol';
import { isLogLevel, type LogLevel } from '../server/logger.ts';

/** The parsed command line of `execd-server`. */
export interface ExecServerCliArgs {
  readonly listen: string | undefined;
  readonly concurrentRequests: string | undefined;
  readonly authTokenFile: string | undefined;
  /** Every `--allowed-host` value, in order (the flag may repeat; a value may list names with commas). */
  readonly allowedHosts: readonly string[];
  /** `--local-peer-check`: `sandboxed-only` (default), `strict` or `off`. */
  readonly localPeerCheck: 'strict' | 'sandboxed-only' | 'off' | undefined;
  readonly logLevel: LogLevel | 'off';
  readonly help: boolean;
}

/** The `--help` text. */
export const USAGE: string = `Usage: execd-server [options]

Options:
  --listen URL                 ws://IP:PORT (default ws://127.0.0.1:0), stdio or stdio://
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
  -h, --help                   show this help

Prints exactly one line, ws://IP:PORT, on stdout once listening (WebSocket mode).
`;

const VALUE_FLAGS = [
  '--listen',
  '--concurrent-requests',
  '--auth-token-file',
  '--allowed-host',
  '--local-peer-check',
  '--log-level',
] as const;
type ValueFlag = (typeof VALUE_FLAGS)[number];

/** Parses `argv` (without node and the script). Throws `ExecError` (`invalidParams`) on bad usage. */
export function parseCliArgs(argv: readonly string[]): ExecServerCliArgs {
  const values = new Map<ValueFlag, string>();
  const allowedHosts: string[] = [];
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '-h' || arg === '--help') {
      help = true;
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
  const logLevel = values.get('--log-level') ?? 'info';
  if (!isLogLevel(logLevel)) {
    throw new ExecError(
      'invalidParams',
      `invalid --log-level \`${logLevel}\`; expected trace, debug, info, warn, error or off`,
    );
  }
  return {
    listen: values.get('--listen'),
    concurrentRequests: values.get('--concurrent-requests'),
    authTokenFile: values.get('--auth-token-file'),
    allowedHosts,
    localPeerCheck: localPeerCheck as ExecServerCliArgs['localPeerCheck'],
    logLevel,
    help,
  };
}
