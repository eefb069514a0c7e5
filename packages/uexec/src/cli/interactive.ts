import type { Interface } from 'node:readline/promises';
import { type ToolCallResult, visibleText } from '@execd/unified-exec';
import type { CliSession } from './cli-session.ts';
import { decodeEscapes } from './escapes.ts';

/** The interactive prompt's help text. */
export const INTERACTIVE_HELP = `Commands:
  exec <command>          exec_command on pipes (stdin closed)
  tty <command>           exec_command in a PTY
  write <id> <text>       write_stdin; escapes: \\n \\r \\t \\e \\\\ \\xHH \\uHHHH (\\x03 = Ctrl-C, \\x04 = Ctrl-D)
  poll <id> [ms]          write_stdin with nothing to write (waits 5000 ms at least)
  list                    the running sessions
  kill <id>               terminate a session
  call <tool> <json>      a raw tool call, e.g. call exec_command {"cmd":"ls","yield_time_ms":1000}
  help                    this text
  quit                    terminate every session and leave (also Ctrl-D)
`;

/**
 * Prints a tool result (what the model sees). Escape sequences and other invisible characters in
 * it (command output, the command in an error text) are shown as escapes: raw, they could change
 * the terminal's state (charset, colours, concealed text) and so how the next approval reads.
 */
function show(out: NodeJS.WritableStream, result: ToolCallResult): void {
  const text = visibleText(result.text, { keepLineBreaks: true });
  out.write(text.endsWith('\n') ? text : `${text}\n`);
}

/** Runs one line; resolves `false` when the person asked to quit. */
export async function runInteractiveLine(
  session: CliSession,
  line: string,
  out: NodeJS.WritableStream,
): Promise<boolean> {
  const trimmed = line.trim();
  if (trimmed.length === 0) return true;
  const space = trimmed.indexOf(' ');
  const verb = space < 0 ? trimmed : trimmed.slice(0, space);
  const rest = space < 0 ? '' : trimmed.slice(space + 1).trim();
  const { tools, manager } = session;
  switch (verb) {
    case 'quit':
    case 'exit':
      return false;
    case 'help':
      out.write(INTERACTIVE_HELP);
      return true;
    case 'exec':
    case 'tty':
      if (rest.length === 0) out.write(`usage: ${verb} <command>\n`);
      else show(out, await tools.execCommand({ cmd: rest, tty: verb === 'tty' }));
      return true;
    case 'write': {
      const match = /^(\S+) ?(.*)$/s.exec(line.trimStart().slice(verb.length).trimStart());
      if (match === null) out.write('usage: write <id> <text>\n');
      else
        show(
          out,
          await tools.writeStdin({ session_id: Number(match[1]), chars: decodeEscapes(match[2] ?? '') }),
        );
      return true;
    }
    case 'poll': {
      const [id, ms] = rest.split(/\s+/);
      if (id === undefined || id.length === 0) out.write('usage: poll <id> [ms]\n');
      else {
        const args: Record<string, unknown> = { session_id: Number(id) };
        if (ms !== undefined) args.yield_time_ms = Number(ms);
        show(out, await tools.writeStdin(args));
      }
      return true;
    }
    case 'list': {
      const rows = manager.listProcesses();
      if (rows.length === 0) out.write('no sessions\n');
      for (const row of rows) {
        out.write(
          `${row.processId}\t${row.running ? 'running' : 'exited'}\t${row.tty ? 'tty' : 'pipe'}\t${visibleText(row.command)}\n`,
        );
      }
      return true;
    }
    case 'kill': {
      const killed = await manager.terminateProcess(Number(rest));
      out.write(killed ? `terminated ${rest}\n` : `no session ${rest}\n`);
      return true;
    }
    case 'call': {
      const match = /^(\S+)\s+([\s\S]*)$/.exec(rest);
      if (match === null) out.write('usage: call <tool> <json>\n');
      else show(out, await tools.call(match[1] ?? '', match[2] ?? ''));
      return true;
    }
    default:
      out.write(`unknown command ${JSON.stringify(verb)}; type help\n`);
      return true;
  }
}

/**
 * The prompt loop: one line at a time until quit or end of input. Lines are queued from the
 * `line` event (not the readline async iterator, which can drop a line that arrives while a
 * command is running).
 */
export async function runInteractive(
  session: CliSession,
  rl: Interface,
  out: NodeJS.WritableStream,
): Promise<void> {
  const lines: string[] = [];
  let ended = false;
  let wake: (() => void) | undefined;
  const notify = (): void => {
    wake?.();
    wake = undefined;
  };
  rl.on('line', (line) => {
    lines.push(line);
    notify();
  });
  rl.once('close', () => {
    ended = true;
    notify();
  });
  out.write('uexec: exec_command / write_stdin playground. Type help for commands.\n');
  rl.setPrompt('uexec> ');
  rl.prompt();
  for (;;) {
    const line = lines.shift();
    if (line === undefined) {
      if (ended) return;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      continue;
    }
    if (!(await runInteractiveLine(session, line, out))) return;
    rl.prompt();
  }
}
