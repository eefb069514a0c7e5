// The help texts of `uexec`: the overview (`uexec --help`) and one per command (`uexec help run`).

/** The commands with their own help. */
export type HelpTopic = 'run' | 'mcp' | 'interactive';

const TOPICS: readonly string[] = ['run', 'mcp', 'interactive'];

/** Whether `word` names a command with its own help. */
export function isHelpTopic(word: string): word is HelpTopic {
  return TOPICS.includes(word);
}

const COMMON_OPTIONS = `Options:
  --sandbox PROFILE          read-only | workspace-write (default) | danger-full-access
  --approval POLICY          never | on-request (default) | on-failure | untrusted
  --cwd DIR                  the workspace and working directory (default: the current folder;
                             / and your home folder are refused under workspace-write)
  --no-shell-snapshot        do not restore a snapshot of your login shell for commands
  --prepare-sandboxes        after a sandboxed command of a kind that repeats, start the next
                             sandbox of its kind ahead (~1/3 of the start time; not --remote)
  --no-fork-server           mcp and interactive: fork commands from uexec itself (by default
                             a small python3 or perl helper starts them, at less cost)
  --remote ws://HOST:PORT    run commands on an execd-server instead of this machine
  --token TOKEN              bearer token for --remote (default: $EXECD_AUTH_TOKEN)
  -h, --help                 show help
  -V, --version              print the version
`;

/** `uexec --help`. */
export const USAGE: string = `Usage:
  uexec                      interactive prompt (exec, write, poll, list, kill, help, quit)
  uexec run <command>        run one command to its end, printing the tool results
  uexec mcp                  serve exec_command, write_stdin and apply_patch over MCP (stdio)
  uexec help [COMMAND]       help on a command (run, mcp, interactive)

${COMMON_OPTIONS}`;

const RUN_USAGE = `Usage:
  uexec run [OPTIONS] <command> [ARGS...]
  uexec run [OPTIONS] -- <command> [ARGS...]
  uexec run [OPTIONS] "<shell script>"

Runs the command through exec_command and, while it runs, polls it with write_stdin,
printing each tool result (what a model would read). Exits with the command's exit code.

One word is a shell script: uexec run "ls | wc -l". Several words are a command and its
arguments, each passed as typed: uexec run ls -la, uexec run grep "a b" notes.txt.
Options of uexec go before the command; anything after it (or after --) is the command's.

Run options:
  --timeout SECONDS          stop the command after SECONDS and exit 124 (default: none)
  --tty                      run it in a PTY
  --yield-time-ms N          how long each tool call waits for output (default 10000)

Ctrl-C stops the command and exits 130.

${COMMON_OPTIONS}`;

const MCP_USAGE = `Usage:
  uexec mcp [OPTIONS]

Serves exec_command, write_stdin and apply_patch to an MCP client over stdio. Commands run
in the --cwd folder (the workspace) under the --sandbox profile. Approvals (--approval) are
asked through MCP elicitation; a client without elicitation gets a refusal that says so.
A line on stderr at start says what is served, where and under which sandbox.

${COMMON_OPTIONS}`;

const INTERACTIVE_USAGE = `Usage:
  uexec [OPTIONS]

A prompt to try exec_command and write_stdin by hand: type help at the prompt for its commands.
Approvals are asked on the terminal.

${COMMON_OPTIONS}`;

/** The help text of `topic` (the overview when undefined). */
export function usageOf(topic: HelpTopic | undefined): string {
  switch (topic) {
    case 'run':
      return RUN_USAGE;
    case 'mcp':
      return MCP_USAGE;
    case 'interactive':
      return INTERACTIVE_USAGE;
    default:
      return USAGE;
  }
}
