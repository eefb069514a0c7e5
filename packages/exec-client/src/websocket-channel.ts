import { ExecError, MAX_FRAME_BYTES, TransportClosedError } from '@execd/protocol';
import WebSocket, { type RawData } from 'ws';
import { UpgradeRefusedError } from './errors.ts';
import type { FrameChannel, FrameChannelHandlers } from './frame-channel.ts';
import { CLOSE_HANDSHAKE_TIMEOUT_MS } from './limits.ts';

/** Options of {@link openWebSocketChannel}. */
export interface WebSocketChannelOptions {
  readonly url: string;
  /** Sent as `Authorization: Bearer <token>` on the upgrade. */
  readonly token?: string | undefined;
  readonly connectTimeoutMs: number;
  readonly maxFrameBytes?: number | undefined;
  /** Abandons opening (rejects with an `aborted` ExecError). */
  readonly cancelSignal?: AbortSignal | undefined;
}

function toFrame(data: RawData): Buffer | readonly Buffer[] {
  // binaryType "fragments": a binary message as the list of its fragments (never joined here,
  // so a large fragmented message is not copied), a text message as one Buffer.
  if (Buffer.isBuffer(data) || Array.isArray(data)) return data;
  return Buffer.from(data as ArrayBuffer);
}

/** A WebSocket as a {@link FrameChannel}. */
class WebSocketChannel implements FrameChannel {
  readonly binaryFrames = true;
  readonly pings = true;
  readonly #socket: WebSocket;
  #closeTimer: NodeJS.Timeout | undefined;

  constructor(socket: WebSocket) {
    this.#socket = socket;
    socket.binaryType = 'fragments';
  }

  get isOpen(): boolean {
    return this.#socket.readyState === WebSocket.OPEN;
  }

  listen(handlers: FrameChannelHandlers): void {
    const socket = this.#socket;
    socket.on('message', (data, isBinary) => handlers.onFrame(toFrame(data), isBinary));
    socket.on('ping', () => handlers.onActivity());
    socket.on('pong', () => handlers.onActivity());
    socket.on('error', (error) => handlers.onError(error));
    socket.on('close', (code, reason) => {
      clearTimeout(this.#closeTimer);
      const text = reason.toString();
      handlers.onClose(code, `websocket closed (${code}${text ? ` ${text}` : ''})`);
    });
    // An accepted socket waited (paused) until its client took it: nothing was read meanwhile.
    if (socket.readyState === WebSocket.CLOSED) {
      queueMicrotask(() => handlers.onClose(1006, 'websocket closed (1006) before it was used'));
    } else if (socket.isPaused) socket.resume();
  }

  send(frame: string | Uint8Array, binary: boolean): void {
    this.#socket.send(frame, { binary });
  }

  ping(): void {
    if (this.isOpen) this.#socket.ping();
  }

  close(): void {
    if (this.#socket.readyState === WebSocket.CLOSED) return;
    if (this.#socket.readyState === WebSocket.OPEN) this.#socket.close(1000, 'client closed');
    this.#closeTimer ??= setTimeout(() => this.#socket.terminate(), CLOSE_HANDSHAKE_TIMEOUT_MS);
  }

  terminate(): void {
    this.#socket.terminate();
  }
}

/** An open WebSocket (e.g. one a host accepted from a dialling executor) as a {@link FrameChannel}. */
export function webSocketChannel(socket: WebSocket): FrameChannel {
  // Read nothing until the client listens: a frame (or the close) would find no handler.
  socket.pause();
  return new WebSocketChannel(socket);
}

/** Opens a WebSocket; rejects with `connectTimeout` or `transportClosed` (refused, HTTP error). */
export function openWebSocketChannel(options: WebSocketChannelOptions): Promise<FrameChannel> {
  const headers: Record<string, string> = {};
  if (options.token !== undefined) headers.Authorization = `Bearer ${options.token}`;
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(options.url, {
      headers,
      perMessageDeflate: false,
      maxPayload: options.maxFrameBytes ?? MAX_FRAME_BYTES,
      // The JSON codec checks every text frame's UTF-8 as it decodes it (a frame that is not
      // valid is refused there, and the connection ends): ws need not check it first.
      skipUTF8Validation: true,
    });
    const onAbort = (): void =>
      fail(new ExecError('aborted', `connecting to exec-server at ${options.url} was cancelled`));
    const fail = (error: ExecError): void => {
      clearTimeout(timer);
      options.cancelSignal?.removeEventListener('abort', onAbort);
      socket.removeAllListeners();
      socket.on('error', () => {});
      socket.terminate();
      reject(error);
    };
    const timer = setTimeout(
      () =>
        fail(
          new ExecError(
            'connectTimeout',
            `timed out connecting to exec-server at ${options.url} after ${options.connectTimeoutMs} ms`,
          ),
        ),
      options.connectTimeoutMs,
    );
    if (options.cancelSignal?.aborted) {
      onAbort();
      return;
    }
    options.cancelSignal?.addEventListener('abort', onAbort, { once: true });
    socket.once('open', () => {
      clearTimeout(timer);
      options.cancelSignal?.removeEventListener('abort', onAbort);
      socket.removeAllListeners();
      resolve(new WebSocketChannel(socket));
    });
    socket.once('unexpected-response', (_request, response) => {
      response.resume();
      fail(new UpgradeRefusedError(options.url, response.statusCode ?? 0));
    });
    socket.once('error', (error) =>
      fail(
        new TransportClosedError(
          undefined,
          `failed to connect to exec-server at ${options.url}: ${error.message}`,
          { cause: error },
        ),
      ),
    );
  });
}
