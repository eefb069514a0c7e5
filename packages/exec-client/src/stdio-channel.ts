import { type ChildProcess, spawn } from 'node:child_process';
import { ExecError, MAX_FRAME_BYTES, TransportClosedError } from '@execd/protocol';
import type { FrameChannel, FrameChannelHandlers } from './frame-channel.ts';
import { STDIO_CLOSE_TIMEOUT_MS, STDIO_STDERR_TAIL_BYTES } from './limits.ts';

/** The command a stdio client spawns: `['ssh', 'host', 'execd-server', '--listen', 'stdio']`. */
export interface StdioCommand {
  readonly argv: readonly string[];
  /** Working directory of the command (default: this process's). */
  readonly cwd?: string | undefined;
  /** Environment of the command (default: this process's). */
  readonly env?: NodeJS.ProcessEnv | undefined;
}

/** Options of {@link openStdioChannel}. */
export interface StdioChannelOptions {
  readonly command: StdioCommand;
  /** Longest accepted line (terminator excluded); a longer one ends the channel. */
  readonly maxFrameBytes?: number | undefined;
  readonly cancelSignal?: AbortSignal | undefined;
}

/** Splits a byte stream into lines (`\n` or `\r\n`), refusing lines over a limit. */
class Lines {
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  constructor(readonly maxBytes: number) {}

  /** The complete lines in `chunk` (with what came before); `overlong` once a line is too long. */
  push(chunk: Buffer): { lines: Buffer[]; overlong: boolean } {
    const lines: Buffer[] = [];
    let start = 0;
    for (let nl = chunk.indexOf(0x0a); nl !== -1; nl = chunk.indexOf(0x0a, start)) {
      const part = chunk.subarray(start, nl);
      let line = this.#pendingBytes === 0 ? part : Buffer.concat([...this.#pending, part]);
      this.#pending = [];
      this.#pendingBytes = 0;
      if (line.at(-1) === 0x0d) line = line.subarray(0, -1);
      if (line.byteLength > this.maxBytes) return { lines, overlong: true };
      lines.push(line);
      start = nl + 1;
    }
    if (start < chunk.byteLength) {
      this.#pending.push(chunk.subarray(start));
      this.#pendingBytes += chunk.byteLength - start;
    }
    // +1: a `\r` may still be followed by its `\n`.
    return { lines, overlong: this.#pendingBytes > this.maxBytes + 1 };
  }
}

/**
 * The stdin and stdout of a spawned command as a {@link FrameChannel}: one JSON message per line
 * each way, as `execd-server --listen stdio` (and `codex exec-server --listen stdio`) speak it.
 * The command's stderr is kept (its tail) for the close reason: an ssh error lands there.
 */
class StdioChannel implements FrameChannel {
  readonly binaryFrames = false;
  readonly pings = false;
  readonly #child: ChildProcess;
  readonly #label: string;
  readonly #lines: Lines;
  #stderrTail = '';
  #open = true;
  #closeTimer: NodeJS.Timeout | undefined;

  constructor(child: ChildProcess, label: string, maxFrameBytes: number) {
    this.#child = child;
    this.#label = label;
    this.#lines = new Lines(maxFrameBytes);
  }

  get isOpen(): boolean {
    return this.#open;
  }

  listen(handlers: FrameChannelHandlers): void {
    const child = this.#child;
    let overlong = false;
    child.stdout!.on('data', (chunk: Buffer) => {
      if (overlong) return;
      const result = this.#lines.push(chunk);
      for (const line of result.lines) {
        // Blank lines are skipped, as the server does.
        if (line.toString('latin1').trim() !== '') handlers.onFrame(line, false);
      }
      if (result.overlong) {
        overlong = true;
        handlers.onError(
          new Error(
            `JSON-RPC message from ${this.#label} exceeds maximum length of ${this.#lines.maxBytes} bytes`,
          ),
        );
        this.terminate();
      }
    });
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (text: string) => {
      this.#stderrTail = (this.#stderrTail + text).slice(-STDIO_STDERR_TAIL_BYTES);
    });
    // EPIPE after the command exited: the close below reports it.
    child.stdin!.on('error', () => {});
    child.on('close', (code, signal) => {
      this.#open = false;
      clearTimeout(this.#closeTimer);
      const status = signal === null ? `code ${code}` : `signal ${signal}`;
      const stderr = this.#stderrTail.trim();
      handlers.onClose(undefined, `${this.#label} exited (${status})${stderr ? `: ${stderr}` : ''}`);
    });
  }

  send(frame: string | Uint8Array): void {
    if (!this.#open) return;
    this.#child.stdin!.write(
      typeof frame === 'string' ? `${frame}\n` : Buffer.concat([frame, Buffer.from('\n')]),
    );
  }

  ping(): void {}

  /** Ends the command's stdin (the server ends its session and exits), then kills it after a bound. */
  close(): void {
    if (this.#closeTimer !== undefined || this.#child.exitCode !== null || this.#child.signalCode !== null)
      return;
    this.#open = false;
    this.#child.stdin!.end();
    this.#closeTimer = setTimeout(() => this.terminate(), STDIO_CLOSE_TIMEOUT_MS);
  }

  terminate(): void {
    this.#open = false;
    // Destroyed, so the close event does not wait on a grandchild that inherited the pipes.
    this.#child.stdin!.destroy();
    this.#child.stdout!.destroy();
    this.#child.stderr!.destroy();
    this.#child.kill('SIGKILL');
  }
}

/** Spawns the command; rejects with `transportClosed` when it cannot be started. */
export function openStdioChannel(options: StdioChannelOptions): Promise<FrameChannel> {
  const argv = options.command.argv;
  const file = argv[0];
  if (file === undefined) return Promise.reject(new RangeError('command must not be empty'));
  const label = `exec-server command \`${argv.join(' ')}\``;
  if (options.cancelSignal?.aborted) {
    return Promise.reject(new ExecError('aborted', `starting ${label} was cancelled`));
  }
  return new Promise((resolve, reject) => {
    const child = spawn(file, argv.slice(1), {
      cwd: options.command.cwd,
      env: options.command.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.once('spawn', () => {
      child.removeAllListeners('error');
      // Errors after the start (a failed kill) change nothing: the close event reports the end.
      child.on('error', () => {});
      resolve(new StdioChannel(child, label, options.maxFrameBytes ?? MAX_FRAME_BYTES));
    });
    child.once('error', (error) =>
      reject(
        new TransportClosedError(undefined, `failed to start ${label}: ${error.message}`, { cause: error }),
      ),
    );
  });
}
