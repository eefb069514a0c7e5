// Runs the built `execd-server` CLI (packages/exec-server/dist/cli/execd-server.js) as a real child.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { waitFor } from './wait-for.ts';

const require = createRequire(import.meta.url);

/** Path of the built CLI script (the package's `bin`). */
export const CLI_SCRIPT: string = join(
  dirname(require.resolve('@execd/exec-server/package.json')),
  'dist/cli/execd-server.js',
);

/** Options of {@link startCliServer}. */
export interface CliServerOptions {
  /** Extra CLI flags (`--listen` defaults to `ws://127.0.0.1:0`). */
  readonly args?: readonly string[];
  /** Environment of the server (default: this process's). */
  readonly env?: NodeJS.ProcessEnv;
  /**
   * File descriptors the server inherits without close-on-exec, by number in the child (as a
   * supervisor or job runner can leak them): `{ 100: fd }`.
   */
  readonly inheritFds?: Readonly<Record<number, number>>;
}

/** A running `execd-server` child. Dispose it (SIGKILL if still running) with `await using`. */
export class CliServer implements AsyncDisposable {
  readonly child: ChildProcessWithoutNullStreams;
  /** `ws://127.0.0.1:PORT` once started. */
  url = '';
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  #stdout = '';

  private constructor(child: ChildProcessWithoutNullStreams) {
    this.child = child;
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      this.#stdout += text;
    });
    child.stderr.setEncoding('utf8').on('data', (text: string) => {
      // Keep the tail only: a long run logs a lot.
      this.stderr = (this.stderr + text).slice(-64 * 1024);
    });
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  }

  /** The server's OS pid. */
  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** Starts the CLI and waits for its URL line. */
  static async start(options: CliServerOptions = {}): Promise<CliServer> {
    const args = options.args ?? [];
    const listen = args.includes('--listen') ? [] : ['--listen', 'ws://127.0.0.1:0'];
    const stdio: ('pipe' | 'ignore' | number)[] = ['pipe', 'pipe', 'pipe'];
    for (const [at, fd] of Object.entries(options.inheritFds ?? {})) {
      while (stdio.length < Number(at)) stdio.push('ignore');
      stdio[Number(at)] = fd;
    }
    const child = spawn(process.execPath, [CLI_SCRIPT, ...listen, ...args], {
      env: options.env ?? process.env,
      stdio,
    }) as ChildProcessWithoutNullStreams;
    const server = new CliServer(child);
    try {
      server.url = await waitFor(
        () => {
          if (child.exitCode !== null) throw new Error(`execd-server exited early: ${server.stderr}`);
          const newline = server.#stdout.indexOf('\n');
          return newline >= 0 ? server.#stdout.slice(0, newline) : undefined;
        },
        { what: 'the execd-server URL line' },
      );
    } catch (error) {
      await server.kill('SIGKILL');
      throw error;
    }
    return server;
  }

  /** The `http://` base of the server (for /readyz and /metrics). */
  get httpUrl(): string {
    return this.url.replace(/^ws:/, 'http:');
  }

  /** Sends `signal` and waits for the exit. */
  async kill(signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    return this.exited;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.kill('SIGKILL');
  }
}
