import {
  type Codec,
  type CodecName,
  createJsonCodec,
  type Logger,
  NOOP_LOGGER,
  type RpcMessage,
} from '@execd/protocol';
import type { ConnectionProcessor, ConnectionTransport } from './connection-processor.ts';
import { encodeOutbound } from './encode-outbound.ts';
import { noteInboundFrame } from './heap-policy.ts';
import { LineSplitter } from './line-splitter.ts';
import { admitNotification, NotificationGate } from './notification-gate.ts';

/** The original's name for the stdio connection (appears in error texts). */
export const STDIO_CONNECTION_LABEL = 'exec-server stdio';

function isBlank(line: Uint8Array): boolean {
  for (const byte of line) {
    if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d && byte !== 0x0b && byte !== 0x0c) return false;
  }
  return true;
}

/** Options of {@link StdioTransport}. */
export interface StdioTransportOptions {
  readonly input: NodeJS.ReadableStream;
  readonly output: NodeJS.WritableStream;
  /** Longest accepted line (terminator excluded); longer input ends the connection. */
  readonly maxFrameBytes: number;
  readonly maxQueuedNotificationBytes: number;
  readonly logger?: Logger;
}

/**
 * Newline-delimited JSON over a pair of streams (spec §2.1): `\n` or `\r\n` terminators, blank
 * lines skipped, one JSON message per line in both directions. An overlong line ends the
 * connection with the original's reason; end of input ends it too.
 */
export class StdioTransport implements ConnectionTransport {
  readonly label: string = STDIO_CONNECTION_LABEL;
  readonly #input: NodeJS.ReadableStream;
  readonly #output: NodeJS.WritableStream & { writableLength?: number };
  readonly #codec: Codec;
  readonly #splitter: LineSplitter;
  readonly #maxFrameBytes: number;
  readonly #gate: NotificationGate;
  readonly #logger: Logger;
  #processor: ConnectionProcessor | undefined;
  #ended = false;
  readonly #onData = (chunk: Buffer | string): void => this.#receive(chunk);
  readonly #onEnd = (): void => this.#end(undefined);
  readonly #onInputError = (error: Error): void =>
    this.#end(`failed to read JSON-RPC message from ${this.label}: ${error.message}`);
  readonly #onOutputError = (error: Error): void =>
    this.#end(`failed to write JSON-RPC message to ${this.label}: ${error.message}`);

  constructor(options: StdioTransportOptions) {
    this.#input = options.input;
    this.#output = options.output;
    this.#maxFrameBytes = options.maxFrameBytes;
    this.#codec = createJsonCodec({ maxFrameBytes: options.maxFrameBytes });
    this.#splitter = new LineSplitter(options.maxFrameBytes);
    this.#logger = options.logger ?? NOOP_LOGGER;
    this.#gate = new NotificationGate({
      maxQueuedBytes: options.maxQueuedNotificationBytes,
      onPressure: (congested) => this.#onPressure(congested),
    });
  }

  /** Starts reading input into `processor`. */
  attach(processor: ConnectionProcessor): void {
    this.#processor = processor;
    this.#input.on('data', this.#onData);
    this.#input.on('end', this.#onEnd);
    this.#input.on('error', this.#onInputError);
    this.#output.on('error', this.#onOutputError);
    this.#input.resume();
  }

  sendResponse(message: RpcMessage, _codec: CodecName): void {
    this.#write(message);
  }

  sendNotification(message: RpcMessage): void {
    if (this.#ended) return;
    const line = this.#encode(message);
    if (line === undefined) return;
    const context = { logger: this.#logger, connection: this.label };
    if (!admitNotification(this.#gate, this.#queued(), line.length, context)) return;
    this.#send(line);
  }

  close(reason: string): void {
    this.#end(reason);
  }

  pauseReading(): void {
    this.#input.pause();
  }

  resumeReading(): void {
    if (!this.#ended) this.#input.resume();
  }

  #write(message: RpcMessage): void {
    if (this.#ended) return;
    const line = this.#encode(message);
    if (line === undefined) return;
    this.#gate.observe(this.#queued(), line.length);
    this.#send(line);
  }

  /** Bytes written but not yet taken by the OS (0 for a synchronous stdout). */
  #queued(): number {
    return this.#output.writableLength ?? 0;
  }

  /** Writes one line; while congested, its flush is reported so the gate sees the backlog drain. */
  #send(line: string): void {
    if (this.#gate.congested) this.#output.write(line, this.#onFlushed);
    else this.#output.write(line);
  }

  readonly #onFlushed = (): void => this.#gate.flushed(this.#queued());

  #onPressure(congested: boolean): void {
    this.#logger.debug(
      congested
        ? "client backlog over the pause mark; holding its processes' output back"
        : "client backlog drained; reading its processes' output again",
      { connection: this.label, bufferedBytes: this.#queued() },
    );
    this.#processor?.outboundPressure(congested);
  }

  #encode(message: RpcMessage): string | undefined {
    const encode = (m: RpcMessage): string => `${this.#codec.encodeText(m)}\n`;
    return encodeOutbound(message, encode, { logger: this.#logger, connection: this.label });
  }

  #receive(chunk: Buffer | string): void {
    if (this.#ended) return;
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    const { lines, overlong } = this.#splitter.push(bytes);
    for (const line of lines) {
      if (isBlank(line)) continue;
      noteInboundFrame(line.byteLength);
      let message: RpcMessage;
      try {
        message = this.#codec.decode(line);
      } catch (error) {
        const detail = error instanceof Error ? error.message : String(error);
        this.#processor?.receiveMalformed(
          `failed to parse JSON-RPC message from ${this.label}: ${detail}`,
          'json',
        );
        continue;
      }
      this.#processor?.receive(message, 'json', line.byteLength);
    }
    if (overlong) {
      this.#end(`JSON-RPC message from ${this.label} exceeds maximum length of ${this.#maxFrameBytes} bytes`);
    }
  }

  #end(reason: string | undefined): void {
    if (this.#ended) return;
    this.#ended = true;
    if (reason) this.#logger.warn('stdio connection ended', { connection: this.label, reason });
    this.#input.off('data', this.#onData);
    this.#input.off('end', this.#onEnd);
    this.#input.off('error', this.#onInputError);
    this.#output.off('error', this.#onOutputError);
    this.#input.pause();
    this.#processor?.disconnected(reason);
  }
}
