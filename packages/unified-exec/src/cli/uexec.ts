#!/usr/bin/env node
// uexec: try exec_command / write_stdin from a terminal, run one command, or serve them over MCP.
import { createInterface, type Interface } from 'node:readline/promises';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { mcpElicitationApprover } from '../mcp/mcp-approver.ts';
import { createUnifiedExecMcpServer } from '../mcp/mcp-server.ts';
import { visibleText } from '../orchestrator/visible-text.ts';
import { type CliOptions, parseCliArgs, USAGE, UsageError } from './cli-args.ts';
import { type CliSession, openCliSession } from './cli-session.ts';
import { parseToolResultExitCode } from './exit-code.ts';
import { runInteractive } from './interactive.ts';
import { terminalApprover } from './terminal-approver.ts';

const SIGNAL_EXIT_CODES: Record<string, number> = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };

/** Makes every exit path (signals included) reap the session's processes first. */
function reapOnSignals(session: () => CliSession | undefined): void {
  for (const [signal, code] of Object.entries(SIGNAL_EXIT_CODES)) {
    process.once(signal, () => {
      void (async () => {
        await session()
          ?.close()
          .catch(() => undefined);
        process.exit(code);
      })();
    });
  }
}

async function runOnce(options: CliOptions): Promise<number> {
  let rl: Interface | undefined;
  const ask = (): ((question: string) => Promise<string>) | undefined => {
    if (!process.stdin.isTTY) return undefined;
    rl ??= createInterface({ input: process.stdin, output: process.stderr });
    return (question) => (rl as Interface).question(question);
  };
  let session: CliSession | undefined;
  reapOnSignals(() => session);
  session = await openCliSession(options, terminalApprover(ask));
  try {
    const args: Record<string, unknown> = { cmd: options.command, tty: options.tty };
    if (options.yieldTimeMs !== undefined) args.yield_time_ms = options.yieldTimeMs;
    const result = await session.tools.execCommand(args);
    // Invisible characters shown as escapes (see `show` in interactive.ts).
    const text = visibleText(result.text, { keepLineBreaks: true });
    process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
    return result.success ? (parseToolResultExitCode(result.text) ?? 0) : 1;
  } finally {
    rl?.close();
    await session.close();
  }
}

async function runPrompt(options: CliOptions): Promise<number> {
  const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: process.stdin.isTTY });
  const ask = process.stdin.isTTY ? () => (question: string) => rl.question(question) : undefined;
  let session: CliSession | undefined;
  reapOnSignals(() => session);
  session = await openCliSession(options, terminalApprover(ask));
  rl.on('SIGINT', () => rl.close());
  try {
    await runInteractive(session, rl, process.stdout);
  } finally {
    rl.close();
    await session.close();
  }
  return 0;
}

async function runMcp(options: CliOptions): Promise<number> {
  let server: Server | undefined;
  let session: CliSession | undefined;
  reapOnSignals(() => session);
  session = await openCliSession(
    options,
    mcpElicitationApprover(() => server),
  );
  const mcp = createUnifiedExecMcpServer({ tools: session.tools });
  server = mcp.server;
  const ended = new Promise<void>((resolve) => {
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
    mcp.server.onclose = () => resolve();
  });
  try {
    await mcp.connect(new StdioServerTransport());
    await ended;
  } finally {
    await mcp.close().catch(() => undefined);
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
    process.stderr.write(`uexec: ${error.message}\n\n${USAGE}`);
    return 2;
  }
  switch (options.mode) {
    case 'help':
      process.stdout.write(USAGE);
      return 0;
    case 'run':
      return runOnce(options);
    case 'mcp':
      return runMcp(options);
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
