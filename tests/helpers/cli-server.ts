// Runs the built `execd-server` CLI (packages/exec-server/dist/cli/execd-server.js) as a real child.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { CliChild } from '@execd/test-kit';

const require = createRequire(import.meta.url);

/** Path of the built CLI script (the package's `bin`). */
export const CLI_SCRIPT: string = join(
  dirname(require.resolve('@execd/exec-server/package.json')),
  'dist/cli/execd-server.js',
);

/** Keep this much of the server's stderr: a long run logs a lot. */
const STDERR_TAIL_CHARS = 64 * 1024;

/** Options of {@link CliServer.start}. */
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
  /** A command line the server runs through (see `CliChildOptions.wrapper`). */
  readonly wrapper?: readonly string[];
}

/** A running `execd-server` child. Dispose it (SIGKILL if still running) with `await using`. */
export class CliServer extends CliChild {
  /** `ws://127.0.0.1:PORT` once started. */
  url = '';

  /** Starts the CLI and waits for its URL line. */
  static async start(options: CliServerOptions = {}): Promise<CliServer> {
    const args = options.args ?? [];
    const listen = args.includes('--listen') ? [] : ['--listen', 'ws://127.0.0.1:0'];
    const server = new CliServer(CLI_SCRIPT, [...listen, ...args], {
      env: options.env,
      inheritFds: options.inheritFds,
      wrapper: options.wrapper,
      stderrTailChars: STDERR_TAIL_CHARS,
    });
    try {
      server.url = await server.firstLine({ what: 'the execd-server URL line', timeoutMs: 30_000 });
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
}
