// A deliberately dumb WebSocket JSON-RPC client for server tests: it sends exactly what a test
// says (well-formed or not), in either codec, and records every frame it receives. Request ids
// are integers from 1, as the original's client.
import { createJsonCodec, createMsgpackCodec, RpcError, type WireError } from '@execd/protocol';
import { waitFor } from '@execd/test-kit';
import WebSocket from 'ws';

/** A received frame, decoded to its plain wire object. */
export interface ReceivedFrame {
  readonly binary: boolean;
  readonly message: Record<string, unknown>;
}

/** Options of {@link RawWsClient.connect}. */
export interface RawWsClientOptions {
  /** `json` (text frames, default), `msgpack` (binary frames) or `binary-json` (JSON in binary frames). */
  readonly codec?: 'json' | 'msgpack' | 'binary-json';
  readonly headers?: Record<string, string>;
  /** Largest frame this client accepts (default 256 MiB). */
  readonly maxPayload?: number;
}

const json = createJsonCodec({ maxFrameBytes: 512 * 1024 * 1024 });
const msgpack = createMsgpackCodec({ maxFrameBytes: 512 * 1024 * 1024 });

/** A raw WebSocket JSON-RPC test client. Dispose it with `await using`. */
export class RawWsClient implements AsyncDisposable {
  readonly socket: WebSocket;
  readonly codec: 'json' | 'msgpack' | 'binary-json';
  /** Every frame received, in order. */
  readonly frames: ReceivedFrame[] = [];
  /** Pings received from the server. */
  pings = 0;
  /** Resolves with the close code and reason once the socket closed. */
  readonly closed: Promise<{ code: number; reason: string }>;
  #nextId = 1;

  private constructor(socket: WebSocket, codec: RawWsClient['codec']) {
    this.socket = socket;
    this.codec = codec;
    this.closed = new Promise((resolve) => {
      socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() }));
    });
    socket.on('message', (data, isBinary) => {
      const bytes = data as Buffer;
      const value = isBinary && bytes[0] !== 0x7b ? msgpack.decodeValue(bytes) : json.decodeValue(bytes);
      this.frames.push({ binary: isBinary, message: value as Record<string, unknown> });
    });
    socket.on('ping', () => {
      this.pings++;
    });
    socket.on('error', () => {});
  }

  /** Opens a connection; rejects with the HTTP status on a refused upgrade. */
  static async connect(url: string, options: RawWsClientOptions = {}): Promise<RawWsClient> {
    const socket = new WebSocket(url, {
      headers: options.headers,
      maxPayload: options.maxPayload ?? 256 * 1024 * 1024,
      perMessageDeflate: false,
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('unexpected-response', (_request, response) => {
        reject(
          Object.assign(new Error(`upgrade refused: ${response.statusCode}`), {
            status: response.statusCode,
          }),
        );
        response.resume();
        socket.terminate();
      });
      socket.once('error', reject);
    });
    return new RawWsClient(socket, options.codec ?? 'json');
  }

  /** Reserves the next request id. */
  nextId(): number {
    return this.#nextId++;
  }

  /** Sends one wire object in this client's codec. */
  send(message: Record<string, unknown>): void {
    if (this.codec === 'msgpack') {
      const kind = 'id' in message ? ('method' in message ? 'request' : 'response') : 'notification';
      // Encode through the codec so Uint8Array fields become msgpack bin.
      this.socket.send(msgpack.encode({ kind, ...message } as never), { binary: true });
      return;
    }
    this.socket.send(
      JSON.stringify(message, (_k, v: unknown) =>
        v instanceof Uint8Array ? Buffer.from(v).toString('base64') : v,
      ),
      {
        binary: this.codec === 'binary-json',
      },
    );
  }

  /** Sends raw bytes or text as one frame. */
  sendRaw(data: string | Uint8Array, binary: boolean = typeof data !== 'string'): void {
    this.socket.send(data, { binary });
  }

  /** Sends a request and returns its id without waiting. */
  request(method: string, params?: unknown): number {
    const id = this.nextId();
    this.send(params === undefined ? { id, method } : { id, method, params });
    return id;
  }

  /** Sends a notification. */
  notify(method: string, params: unknown = {}): void {
    this.send({ method, params });
  }

  /** Waits for the response (or error) to `id`. */
  async response(id: number, timeoutMs?: number): Promise<Record<string, unknown>> {
    return waitFor(() => this.frames.find((frame) => frame.message.id === id)?.message, {
      what: `response ${id}`,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
    });
  }

  /** Waits for the error response to `id` and returns its error object. */
  async errorOf(id: number): Promise<WireError> {
    const message = await this.response(id);
    if (!('error' in message)) throw new Error(`expected an error for ${id}, got ${JSON.stringify(message)}`);
    return message.error as WireError;
  }

  /** Sends a request and resolves with its result; rejects with an RpcError for an error reply. */
  async call<T = Record<string, unknown>>(method: string, params?: unknown): Promise<T> {
    const message = await this.response(this.request(method, params));
    if ('error' in message) throw RpcError.fromWire(message.error as WireError);
    return message.result as T;
  }

  /** `initialize` then `initialized`; resolves with the initialize result. */
  async initialize(resumeSessionId?: string): Promise<{ sessionId: string; environmentInfo?: unknown }> {
    const result = await this.call<{ sessionId: string }>('initialize', {
      clientName: 'raw-test-client',
      resumeSessionId: resumeSessionId ?? null,
    });
    this.notify('initialized', {});
    return result;
  }

  /** Notifications received so far, optionally of one method. */
  notifications(method?: string): Record<string, unknown>[] {
    return this.frames
      .map((frame) => frame.message)
      .filter((message) => !('id' in message) && (method === undefined || message.method === method));
  }

  /** Stops reading from the socket (the server's send buffer then fills up). */
  pause(): void {
    this.socket.pause();
  }

  resume(): void {
    this.socket.resume();
  }

  /** Closes with a close handshake and waits for the socket to close. */
  async close(): Promise<void> {
    if (this.socket.readyState === WebSocket.OPEN || this.socket.readyState === WebSocket.CONNECTING)
      this.socket.close();
    const timer = setTimeout(() => this.socket.terminate(), 2_000);
    await this.closed;
    clearTimeout(timer);
  }

  /** Drops the TCP connection without a close handshake (a lost network). */
  async drop(): Promise<void> {
    this.socket.terminate();
    await this.closed;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
