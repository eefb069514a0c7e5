// A package's CLI run as a real child process (`execd-server`, `uexec`), with its output collected.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { waitFor } from './wait-for.ts';

/** How a child ended. */
export interface ChildExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** Options of {@link CliChild}. */
export interface CliChildOptions {
  readonly cwd?: string | undefined;
  /** Environment of the child. Default: this process's. */
  readonly env?: NodeJS.ProcessEnv | undefined;
  /**
   * File descriptors the child inherits without close-on-exec, by number in the child (as a
   * supervisor or job runner can leak them): `{ 100: fd }`.
   */
  readonly inheritFds?: Readonly<Record<number, number>> | undefined;
  /** Keep only the last this many characters of stderr (a long run logs a lot). Default: all. */
  readonly stderrTailChars?: number | undefined;
  /**
   * A command line the script runs through, `[program, ...args]` (e.g. `unshare -m ...`): the
   * child is `program ...args node <script> ...args`. It must end by exec'ing node, so that the
   * child's pid is the script's.
   */
  readonly wrapper?: readonly string[] | undefined;
}

/**
 * `node <script> ...args` as a child with stdin, stdout and stderr on pipes. Disposing it
 * (`await using`) sends SIGKILL if it still runs and waits for the exit.
 */
export class CliChild implements AsyncDisposable {
  readonly child: ChildProcessWithoutNullStreams;
  /** Everything it printed on stdout so far. */
  stdout = '';
  /** What it printed on stderr so far (the tail only with `stderrTailChars`). */
  stderr = '';
  /** Settles when it exits. */
  readonly exited: Promise<ChildExit>;

  constructor(script: string, args: readonly string[], options: CliChildOptions = {}) {
    const stdio: ('pipe' | 'ignore' | number)[] = ['pipe', 'pipe', 'pipe'];
    for (const [at, fd] of Object.entries(options.inheritFds ?? {})) {
      while (stdio.length < Number(at)) stdio.push('ignore');
      stdio[Number(at)] = fd;
    }
    const [program, ...argv] = [...(options.wrapper ?? []), process.execPath, script, ...args];
    this.child = spawn(program!, argv, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio,
    }) as ChildProcessWithoutNullStreams;
    const tail = options.stderrTailChars;
    this.child.stdout.setEncoding('utf8').on('data', (text: string) => {
      this.stdout += text;
    });
    this.child.stderr.setEncoding('utf8').on('data', (text: string) => {
      this.stderr = tail === undefined ? this.stderr + text : (this.stderr + text).slice(-tail);
    });
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => resolve({ code, signal }));
    });
  }

  /** Its OS pid. */
  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** True until it exits. */
  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Writes to its stdin. */
  send(text: string): void {
    this.child.stdin.write(text);
  }

  /**
   * Waits for the first line on stdout (a server's URL) and returns it without the newline;
   * throws at once if the child exits first, with its stderr.
   */
  async firstLine(options: { readonly what?: string; readonly timeoutMs?: number } = {}): Promise<string> {
    const what = options.what ?? 'the first line on stdout';
    const line = await waitFor(
      () => {
        const newline = this.stdout.indexOf('\n');
        if (newline >= 0) return { line: this.stdout.slice(0, newline) };
        return this.running ? undefined : { line: undefined };
      },
      {
        what: `${what} (stderr so far: ${this.stderr})`,
        ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
      },
    );
    if (line.line === undefined) throw new Error(`the child exited before printing ${what}: ${this.stderr}`);
    return line.line;
  }

  /** Stderr parsed as JSON lines (a structured log). */
  logRecords(): Record<string, unknown>[] {
    return this.stderr
      .split('\n')
      .filter((line) => line.length > 0)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  /** Sends `signal` (if it still runs) and waits for the exit. */
  async kill(signal: NodeJS.Signals): Promise<ChildExit> {
    if (this.running) this.child.kill(signal);
    return this.exited;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.kill('SIGKILL');
  }
}

/** What a CLI run to completion printed. */
export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `node <script> ...args` to completion with `input` on stdin (then closed). */
export async function runCli(
  script: string,
  args: readonly string[],
  options: CliChildOptions & { readonly input?: string } = {},
): Promise<CliRun> {
  await using child = new CliChild(script, args, options);
  child.child.stdin.end(options.input ?? '');
  const { code } = await child.exited;
  return { code, stdout: child.stdout, stderr: child.stderr };
}
