import { parseArgs } from 'node:util';
import { ExecError, type PermissionProfileName } from '@execd/protocol';
import type { ApprovalPolicy } from '../tools/exec-command-policy.ts';

/** What the command line asks for. */
export interface CliOptions {
  readonly mode: 'interactive' | 'run' | 'mcp' | 'help';
  /** `run`: the command string. */
  readonly command: string | undefined;
  readonly remote: string | undefined;
  readonly token: string | undefined;
  readonly sandbox: PermissionProfileName;
  readonly approval: ApprovalPolicy;
  readonly cwd: string | undefined;
  /** `run`: allocate a PTY. */
  readonly tty: boolean;
  /** `run`: the exec_command yield. */
  readonly yieldTimeMs: number | undefined;
}

/** A command line that cannot be run (the message says why). */
export class UsageError extends ExecError {
  override name = 'UsageError';

  constructor(message: string) {
    super('invalidParams', message);
  }
}

const SANDBOXES: readonly PermissionProfileName[] = ['read-only', 'workspace-write', 'danger-full-access'];
const APPROVALS: readonly ApprovalPolicy[] = ['never', 'on-request', 'on-failure', 'untrusted'];

/** The `--help` text. */
export const USAGE = `Usage:
  uexec                      interactive prompt (exec, write, poll, list, kill, help, quit)
  uexec run "<command>"      run one exec_command and print the tool result
  uexec mcp                  serve exec_command and write_stdin over MCP (stdio)

Options:
  --remote ws://HOST:PORT    run commands on an execd-server instead of this machine
  --token TOKEN              bearer token for --remote (default: $EXECD_AUTH_TOKEN)
  --sandbox PROFILE          read-only | workspace-write (default) | danger-full-access
  --approval POLICY          never | on-request (default) | on-failure | untrusted
  --cwd DIR                  working directory of commands (default: the current one)
  --tty                      run: allocate a PTY
  --yield-time-ms N          run: how long to wait for output (250..30000, default 10000)
  -h, --help                 show this text
`;

function oneOf<T extends string>(
  name: string,
  value: string | undefined,
  allowed: readonly T[],
  fallback: T,
): T {
  if (value === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new UsageError(`--${name} must be one of ${allowed.join(', ')} (got ${JSON.stringify(value)})`);
  }
  return value as T;
}

/** Parses `process.argv.slice(2)`; throws UsageError. */
export function parseCliArgs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): CliOptions {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        remote: { type: 'string' },
        token: { type: 'string' },
        sandbox: { type: 'string' },
        approval: { type: 'string' },
        cwd: { type: 'string' },
        tty: { type: 'boolean' },
        'yield-time-ms': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  const [verb, ...rest] = parsed.positionals;
  let mode: CliOptions['mode'];
  let command: string | undefined;
  if (values.help === true) mode = 'help';
  else if (verb === undefined) mode = 'interactive';
  else if (verb === 'run') {
    mode = 'run';
    command = rest.join(' ');
    if (command.trim().length === 0) throw new UsageError('run needs a command: uexec run "echo hi"');
  } else if (verb === 'mcp' && rest.length === 0) mode = 'mcp';
  else throw new UsageError(`unknown command ${JSON.stringify([verb, ...rest].join(' '))}`);
  const yieldText = values['yield-time-ms'] as string | undefined;
  const yieldTimeMs = yieldText === undefined ? undefined : Number(yieldText);
  if (yieldTimeMs !== undefined && !(Number.isSafeInteger(yieldTimeMs) && yieldTimeMs >= 0)) {
    throw new UsageError(`--yield-time-ms must be a non-negative integer (got ${JSON.stringify(yieldText)})`);
  }
  const remote = values.remote as string | undefined;
  if (remote !== undefined && !/^wss?:\/\//.test(remote)) {
    throw new UsageError(`--remote must be a ws:// or wss:// URL (got ${JSON.stringify(remote)})`);
  }
  return {
    mode,
    command,
    remote,
    token: (values.token as string | undefined) ?? env.EXECD_AUTH_TOKEN,
    sandbox: oneOf('sandbox', values.sandbox as string | undefined, SANDBOXES, 'workspace-write'),
    approval: oneOf('approval', values.approval as string | undefined, APPROVALS, 'on-request'),
    cwd: values.cwd as string | undefined,
    tty: values.tty === true,
    yieldTimeMs,
  };
}
