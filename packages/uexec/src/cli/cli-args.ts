import { parseArgs } from 'node:util';
import { ExecError, type PermissionProfileName } from '@execd/protocol';
import { type ApprovalPolicy, shlexJoin } from '@execd/unified-exec';
import { type HelpTopic, isHelpTopic } from './usage.ts';

/** What the command line asks for. */
export interface CliOptions {
  readonly mode: 'interactive' | 'run' | 'mcp' | 'help' | 'version';
  /** `help`: the command whose help to show (undefined: the overview). */
  readonly helpTopic: HelpTopic | undefined;
  /** `run`: the command string. */
  readonly command: string | undefined;
  readonly remote: string | undefined;
  readonly token: string | undefined;
  readonly sandbox: PermissionProfileName;
  /** Whether `--sandbox` was given (the default is workspace-write). */
  readonly sandboxExplicit: boolean;
  readonly approval: ApprovalPolicy;
  readonly cwd: string | undefined;
  /** `run`: allocate a PTY. */
  readonly tty: boolean;
  /** `run`: the exec_command yield. */
  readonly yieldTimeMs: number | undefined;
  /** `run`: stop the command after this many seconds (undefined: wait for its end). */
  readonly timeoutSeconds: number | undefined;
  /** Restore a snapshot of the login shell for `-lc` commands (default on). */
  readonly shellSnapshot: boolean;
  /** Local only: start the next sandbox of a repeating kind of command ahead (default off). */
  readonly prepareSandboxes: boolean;
  /**
   * Local `mcp` and interactive sessions: start commands on pipes from a fork server's helper
   * (default on; `--no-fork-server`). A one-off `run` forks itself: the helper would cost more
   * to start than it saves.
   */
  readonly forkServer: boolean;
}

/** A command line that cannot be run (the message says why). */
export class UsageError extends ExecError {
  override name = 'UsageError';
  /** The command whose usage to print with the message. */
  readonly topic: HelpTopic | undefined;

  constructor(message: string, topic?: HelpTopic) {
    super('invalidParams', message);
    this.topic = topic;
  }
}

const SANDBOXES: readonly PermissionProfileName[] = ['read-only', 'workspace-write', 'danger-full-access'];
const APPROVALS: readonly ApprovalPolicy[] = ['never', 'on-request', 'on-failure', 'untrusted'];

const OPTIONS = {
  remote: { type: 'string' },
  token: { type: 'string' },
  sandbox: { type: 'string' },
  approval: { type: 'string' },
  cwd: { type: 'string' },
  tty: { type: 'boolean' },
  'yield-time-ms': { type: 'string' },
  timeout: { type: 'string' },
  'shell-snapshot': { type: 'boolean' },
  'no-shell-snapshot': { type: 'boolean' },
  'prepare-sandboxes': { type: 'boolean' },
  'no-fork-server': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'V' },
} as const;

/** Options that take a value as the next argument (`--cwd DIR`). */
const VALUE_OPTIONS: ReadonlySet<string> = new Set(
  Object.entries(OPTIONS)
    .filter(([, option]) => option.type === 'string')
    .map(([name]) => `--${name}`),
);

/**
 * Splits `run`'s command off the options: after the verb `run`, options are read up to the first
 * word that is not one (or `--`); everything from there is the command, verbatim, so
 * `uexec run ls -la` and `uexec run --cwd /src -- ls -la` both run `ls -la`.
 */
function splitRunCommand(argv: readonly string[]): { options: string[]; command: string[] | undefined } {
  let verbSeen = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      return verbSeen
        ? { options: argv.slice(0, i), command: argv.slice(i + 1) }
        : { options: [...argv], command: undefined };
    }
    if (arg.startsWith('-') && arg !== '-') {
      if (VALUE_OPTIONS.has(arg)) i++;
      continue;
    }
    if (verbSeen) return { options: argv.slice(0, i), command: argv.slice(i) };
    if (arg !== 'run') return { options: [...argv], command: undefined };
    verbSeen = true;
  }
  return { options: [...argv], command: verbSeen ? [] : undefined };
}

/**
 * One word is a shell script (`uexec run "ls | wc -l"`); several are an argv, quoted so each
 * reaches the command as typed (`uexec run grep "a b" file`).
 */
function commandText(words: readonly string[]): string {
  return words.length === 1 ? (words[0] as string) : shlexJoin(words);
}

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

function nonNegative(name: string, text: string | undefined, integer: boolean): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  const ok = text.trim() !== '' && Number.isFinite(value) && value >= 0;
  if (!ok || (integer && !Number.isSafeInteger(value))) {
    const what = integer ? 'a non-negative integer' : 'a non-negative number';
    throw new UsageError(`--${name} must be ${what} (got ${JSON.stringify(text)})`);
  }
  return value;
}

/** Parses `process.argv.slice(2)`; throws UsageError. */
export function parseCliArgs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): CliOptions {
  const split = splitRunCommand(argv);
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: split.options, allowPositionals: true, options: OPTIONS });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new UsageError(message, split.command === undefined ? undefined : 'run');
  }
  const values = parsed.values;
  const positionals = split.command === undefined ? parsed.positionals : parsed.positionals.slice(0, 1);
  const [verb, ...rest] = positionals;
  let mode: CliOptions['mode'];
  let helpTopic: HelpTopic | undefined;
  let command: string | undefined;
  if (verb === 'help') {
    mode = 'help';
    const [topic, ...extra] = rest;
    if (topic !== undefined && (!isHelpTopic(topic) || extra.length > 0)) {
      throw new UsageError(`no help for ${JSON.stringify(rest.join(' '))}; commands: run, mcp, interactive`);
    }
    helpTopic = topic;
  } else if (values.version === true) mode = 'version';
  else if (values.help === true) {
    mode = 'help';
    helpTopic = verb !== undefined && isHelpTopic(verb) ? verb : undefined;
  } else if (verb === undefined) mode = 'interactive';
  else if (verb === 'run') {
    mode = 'run';
    command = commandText(split.command ?? []);
    if (command.trim().length === 0) {
      throw new UsageError('run needs a command: uexec run ls -la, or uexec run "ls | wc -l"', 'run');
    }
  } else if (verb === 'mcp' && rest.length === 0) mode = 'mcp';
  else throw new UsageError(`unknown command ${JSON.stringify([verb, ...rest].join(' '))}`);
  const remote = values.remote;
  if (remote !== undefined && !/^wss?:\/\//.test(remote)) {
    throw new UsageError(`--remote must be a ws:// or wss:// URL (got ${JSON.stringify(remote)})`);
  }
  if (remote !== undefined && values['prepare-sandboxes'] === true) {
    throw new UsageError(
      '--prepare-sandboxes is for this machine; with --remote the server decides (execd-server --prepare-sandboxes)',
    );
  }
  const timeoutSeconds = nonNegative('timeout', values.timeout, false);
  if (timeoutSeconds === 0) throw new UsageError('--timeout must be more than 0 seconds');
  return {
    mode,
    helpTopic,
    command,
    remote,
    token: values.token ?? env.EXECD_AUTH_TOKEN,
    sandbox: oneOf('sandbox', values.sandbox, SANDBOXES, 'workspace-write'),
    sandboxExplicit: values.sandbox !== undefined,
    approval: oneOf('approval', values.approval, APPROVALS, 'on-request'),
    cwd: values.cwd,
    tty: values.tty === true,
    yieldTimeMs: nonNegative('yield-time-ms', values['yield-time-ms'], true),
    timeoutSeconds,
    shellSnapshot: values['no-shell-snapshot'] !== true,
    prepareSandboxes: values['prepare-sandboxes'] === true,
    forkServer: remote === undefined && mode !== 'run' && values['no-fork-server'] !== true,
  };
}
