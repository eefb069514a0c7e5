import { readSync, writeSync } from 'node:fs';
import type { ReadStream } from 'node:tty';
import { stdinClosedError } from '../stdin-closed.ts';
import type { StdinPort } from './child-handle.ts';

/** Read size of the synchronous drain at EOF; what is left then is at most the kernel's tty buffers. */
const DRAIN_READ_BYTES = 64 * 1024;

/**
 * Reads what is left on a PTY master after libuv reported EOF, until EIO (every slave fd is closed
 * and the line discipline is empty).
 *
 * HACK: libuv treats POLLHUP after a short read as EOF (`uv__stream_io`), but a PTY master returns at
 * most one line-discipline buffer (4 KiB) per read, so up to the kernel's tty buffer of output is
 * still queued when the child's exit hangs up the slave. The stream is opened half-open, so the fd
 * is still ours here; a non-blocking read loop collects the rest synchronously.
 */
export function drainMaster(master: ReadStream, fd: number): Uint8Array[] {
  const rest: Uint8Array[] = [];
  while (!master.destroyed) {
    const buffer = Buffer.allocUnsafe(DRAIN_READ_BYTES);
    let read: number;
    try {
      read = readSync(fd, buffer, 0, DRAIN_READ_BYTES, null);
    } catch {
      break; // EIO: drained. EAGAIN: someone reopened the slave; libuv is no longer reading, so stop.
    }
    if (read === 0) break;
    rest.push(buffer.subarray(0, read));
  }
  return rest;
}

/**
 * Pause before retrying a write the terminal refused for lack of room (EAGAIN). Short enough to feel
 * immediate to an interactive program, long enough not to spin while a child ignores its input.
 */
const PTY_WRITE_RETRY_MS = 5;

interface PendingWrite {
  bytes: Uint8Array;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Input of a PTY child: writes go to the master fd; there is no EOF to send (write ^D instead).
 *
 * HACK: not through the socket. libuv opens a PTY master with "blocking writes" (it cannot reopen
 * it non-blocking), and on the non-blocking fd node-pty hands it, a full terminal makes `uv__write`
 * retry EAGAIN in a busy loop that freezes the event loop. And once every slave fd is closed, a write
 * fails with EIO, which through the socket would destroy it and drop output not read yet. So writes
 * are `writeSync` calls, in order, retried on a timer while the terminal is full.
 */
export class PtyStdin implements StdinPort {
  readonly #master: ReadStream;
  readonly #fd: number;
  #queue: PendingWrite[] = [];
  #retry: NodeJS.Timeout | undefined;

  constructor(master: ReadStream, fd: number) {
    this.#master = master;
    this.#fd = fd;
  }

  write(bytes: Uint8Array): Promise<void> {
    if (this.#master.destroyed) return Promise.reject(stdinClosedError('the terminal is closed'));
    return new Promise((resolve, reject) => {
      this.#queue.push({ bytes, resolve, reject });
      if (this.#queue.length === 1) this.#flush();
    });
  }

  close(): void {}

  destroy(): void {
    this.#master.destroy();
    this.#failAll(undefined);
  }

  #flush(): void {
    this.#retry = undefined;
    for (let head = this.#queue[0]; head !== undefined; head = this.#queue[0]) {
      // The fd number stops being ours the moment the master is destroyed.
      if (this.#master.destroyed) {
        this.#failAll(undefined);
        return;
      }
      try {
        while (head.bytes.length > 0) head.bytes = head.bytes.subarray(writeSync(this.#fd, head.bytes));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EAGAIN') {
          this.#retry = setTimeout(() => this.#flush(), PTY_WRITE_RETRY_MS);
          return;
        }
        this.#failAll(error);
        return;
      }
      this.#queue.shift();
      head.resolve();
    }
  }

  #failAll(cause: unknown): void {
    clearTimeout(this.#retry);
    this.#retry = undefined;
    const failed = this.#queue;
    this.#queue = [];
    for (const pending of failed) pending.reject(stdinClosedError('writing to the terminal failed', cause));
  }
}
