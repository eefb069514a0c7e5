import { ExecError } from '@execd/protocol';
import { isLogLevel, type LogLevel } from '../server/logger.ts';

/** The parsed command line of `execd-server`. */
export interface ExecServerCliArgs {
  readonly listen: string | undefined;
  readonly concurrentRequests: string | undefined;
  readonly authTokenFile: string | undefined;
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
  --log-level LEVEL            trace, debug, info (default), warn, error or off; logs go to stderr
  -h, --help                   show this help

Prints exactly one line, ws://IP:PORT, on stdout once listening (WebSocket mode).
`;

const VALUE_FLAGS = ['--listen', '--concurrent-requests', '--auth-token-file', '--log-level'] as const;
type ValueFlag = (typeof VALUE_FLAGS)[number];

/** Parses `argv` (without node and the script). Throws `ExecError` (`invalidParams`) on bad usage. */
export function parseCliArgs(argv: readonly string[]): ExecServerCliArgs {
  const values = new Map<ValueFlag, string>();
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
    values.set(name as ValueFlag, value);
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
    logLevel,
    help,
  };
}
