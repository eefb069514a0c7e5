#!/usr/bin/env node
// uexec: try exec_command / write_stdin from a terminal, run one command, or serve them over MCP.
import { createInterface, type Interface } from 'node:readline/promises';
import { closeInheritedDescriptors } from '@execd/pty-utils';
import { type ToolCallResult, visibleText } from '@execd/unified-exec';
import packageJson from '../../package.json' with { type: 'json' };
import { type CliOptions, parseCliArgs, UsageError } from './cli-args.ts';
import { type CliSession, openCliSession } from './cli-session.ts';
import { runInteractive } from './interactive.ts';
import { runMcp } from './mcp-command.ts';
import { runToEnd } from './run-command.ts';
import { reapOnSignals, SIGNAL_EXIT_CODES } from './signals.ts';
import { terminalApprover } from './terminal-approver.ts';
import { usageOf } from './usage.ts';
import { refusedWorkspace } from './workspace-guard.ts';

/** `timeout(1)`'s status for a command stopped at its deadline. */
const EXIT_TIMED_OUT = 124;

/** Prints a tool result with invisible characters shown as escapes (see `show` in interactive.ts). */
function printResult(result: ToolCallResult): void {
  const text = visibleText(result.text, { keepLineBreaks: true });
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

async function runOnce(options: CliOptions): Promise<number> {
  let rl: Interface | undefined;
  const ask = (): ((question: string) => Promise<string>) | undefined => {
    if (!process.stdin.isTTY) return undefined;
    if (rl === undefined) {
      rl = createInterface({ input: process.stdin, output: process.stderr });
      // Ctrl-C at an approval question (the terminal in raw mode) interrupts the run as anywhere else.
      rl.on('SIGINT', () => process.kill(process.pid, 'SIGINT'));
    }
    return (question) => (rl as Interface).question(question);
  };
  let session: CliSession | undefined;
  const interrupted = new AbortController();
  reapOnSignals(
    () => session,
    () => interrupted.abort(),
  );
  session = await openCliSession(options, terminalApprover(ask));
  try {
    const outcome = await runToEnd(session, {
      command: options.command ?? '',
      tty: options.tty,
      yieldTimeMs: options.yieldTimeMs,
      timeoutSeconds: options.timeoutSeconds,
      print: printResult,
      cancelSignal: interrupted.signal,
    });
    switch (outcome.kind) {
      case 'exited':
        return outcome.exitCode;
      case 'timedOut':
        process.stderr.write(`uexec: stopped the command after ${options.timeoutSeconds} s (--timeout)\n`);
        return EXIT_TIMED_OUT;
      case 'interrupted':
        return SIGNAL_EXIT_CODES.SIGINT;
      default:
        return 1;
    }
  } finally {
    rl?.close();
    await session.close();
  }
}

async function runPrompt(options: CliOptions): Promise<number> {
  let session: CliSession | undefined;
  reapOnSignals(() => session);
  // Approvals are asked on the prompt's own interface, which exists by the time one is asked.
  let prompt: Interface | undefined;
  const ask = process.stdin.isTTY
    ? () => (question: string) => (prompt as Interface).question(question)
    : undefined;
  session = await openCliSession(options, terminalApprover(ask));
  // Made once the session is open: lines read while it opened (a fork server starting) would
  // have no listener yet and be lost.
  const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: process.stdin.isTTY });
  prompt = rl;
  rl.on('SIGINT', () => rl.close());
  try {
    await runInteractive(session, rl, process.stdout);
  } finally {
    rl.close();
    await session.close();
  }
  return 0;
}

async function main(argv: readonly string[]): Promise<number> {
  let options: CliOptions;
  try {
    options = parseCliArgs(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`uexec: ${error.message}\n\n${usageOf(error.topic)}`);
    return 2;
  }
  if (options.mode === 'help') {
    process.stdout.write(usageOf(options.helpTopic));
    return 0;
  }
  if (options.mode === 'version') {
    process.stdout.write(`uexec ${packageJson.version}\n`);
    return 0;
  }
  const refused = refusedWorkspace(options);
  if (refused !== undefined) {
    process.stderr.write(`uexec: ${refused}\n`);
    return 2;
  }
  // What an MCP host or a shell left open across exec would reach every command otherwise.
  closeInheritedDescriptors();
  switch (options.mode) {
    case 'run':
      return runOnce(options);
    case 'mcp':
      return runMcp(options, packageJson.version);
    case 'interactive':
      return runPrompt(options);
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`uexec: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
