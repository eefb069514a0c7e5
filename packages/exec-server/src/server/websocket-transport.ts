import type { Writable } from 'node:stream';
import {
  type Codec,
  type CodecName,
  type Logger,
  NOOP_LOGGER,
  type RpcMessage,
  sniffCodec,
} from '@execd/protocol';
import type { RawData, WebSocket } from 'ws';
import type { ConnectionProcessor, ConnectionTransport } from './connection-processor.ts';
import { byteLengthOf, OutboundEncoder } from './encode-outbound.ts';
import { FrameSlab } from './frame-slab.ts';
import { noteInboundFrame } from './heap-policy.ts';
import { admitNotification, NotificationGate } from './notification-gate.ts';
import { MAX_OUTPUT_BATCH_BYTES, OutboundBatch } from './outbound-batch.ts';
import { OutboundTurn } from './outbound-turn.ts';
import type { MeteredSocket, PartialFrameBudget, PartialFrameMeter } from './partial-frame-budget.ts';

/**
 * Interval between server pings: the original's `WEBSOCKET_KEEPALIVE_INTERVAL`. Keeps idle
 * connections alive through proxies and lets the server notice dead peers.
 */
export const WEBSOCKET_KEEPALIVE_INTERVAL_MS = 30_000;

/**
 * A peer that answered none of this many consecutive pings (and sent nothing else) is dead: its
 * socket is destroyed so its session detaches and can be resumed from a new connection. Pings
 * sent while the peer had not yet read everything before them do not count (they wait behind it).
 */
export const KEEPALIVE_MISSES_BEFORE_TERMINATE = 3;

/** WebSocket close code for a connection ended by a protocol violation (RFC 6455 §7.4.1). */
const CLOSE_PROTOCOL_ERROR = 1002;

/** Close reasons are limited to 123 bytes by the protocol; keep well inside it. */
const MAX_CLOSE_REASON_CHARS = 100;

/** Options of {@link WebSocketTransport}. */
export interface WebSocketTransportOptions {
  readonly socket: WebSocket;
  /**
   * The upgraded TCP socket under `socket`, corked across each turn of the event loop so that the
   * frames of one turn leave in one write (`writev`) instead of one write each. Absent: not corked.
   */
  readonly rawSocket?: (Writable & MeteredSocket) | undefined;
  /**
   * The server's bound on frames still arriving, shared by its connections (needs `rawSocket`,
   * whose reads it counts). Absent: this connection's frames are not bounded together with others.
   */
  readonly partialFrames?: PartialFrameBudget | undefined;
  readonly label: string;
  readonly codecs: Readonly<Record<CodecName, Codec>>;
  readonly keepaliveIntervalMs: number;
  readonly maxQueuedNotificationBytes: number;
  readonly logger?: Logger;
}

/**
 * One accepted WebSocket as a {@link ConnectionTransport}: one message per frame; text frames
 * are JSON, binary frames msgpack unless they start with `{` (original clients send JSON in
 * binary frames). Replies go in the codec of their request (JSON always as text frames);
 * notifications in the codec of the connection's first frame.
 */
export class WebSocketTransport implements ConnectionTransport {
  readonly label: string;
  readonly #socket: WebSocket;
  readonly #held = new OutboundBatch();
  readonly #codecs: Readonly<Record<CodecName, Codec>>;
  readonly #encoder: OutboundEncoder;
  readonly #gate: NotificationGate;
  readonly #logger: Logger;
  readonly #keepalive: NodeJS.Timeout | undefined;
  #codec: CodecName | undefined;
  #missedPings = 0;
  /** Bytes of frames handed to the socket so far (pings and pongs not counted). */
  #sentBytes = 0;
  /** `#sentBytes` when each unanswered ping was sent, oldest first (pongs come back in order). */
  readonly #pingMarks: number[] = [];
  /** The peer has read at least this much: what was sent before the last ping it answered. */
  #readUpTo = 0;
  /** Why reading is paused: the inbound queue is full, a large frame waits for room. */
  readonly #pausedBy = new Set<'queue' | 'budget'>();
  readonly #partialFrames: PartialFrameMeter | undefined;
  /** When the peer last sent anything (a frame, a ping or a pong). */
  #lastHeardMs = performance.now();
  #probe: NodeJS.Timeout | undefined;
  #processor: ConnectionProcessor | undefined;
  /** The client asked for `process/outputBatch` (see `enableOutputBatches`). */
  #batchOutput = false;
  /** Frames of one turn leave in one write; held output is written when it ends. */
  readonly #turn: OutboundTurn;
  /** The TCP socket under `#socket`, when known: output frames are laid out for it. */
  readonly #raw: (Writable & MeteredSocket) | undefined;
  /** Output frames of the turn, written to `#raw` as one buffer when it ends. */
  readonly #slab = new FrameSlab();

  constructor(options: WebSocketTransportOptions) {
    this.label = options.label;
    this.#socket = options.socket;
    this.#raw = options.rawSocket;
    // Once the socket holds none of its frames, the slab's memory can be written again.
    const settle = (): void => this.#slab.settle(options.rawSocket?.writableLength === 0);
    this.#turn = new OutboundTurn(options.rawSocket, () => this.#releaseHeld(), settle);
    this.#partialFrames =
      options.rawSocket &&
      options.partialFrames?.attach(options.rawSocket, {
        pause: () => this.#pauseFor('budget'),
        resume: () => this.#resumeFor('budget'),
      });
    this.#codecs = options.codecs;
    this.#logger = options.logger ?? NOOP_LOGGER;
    this.#encoder = new OutboundEncoder(options.codecs, { logger: this.#logger, connection: this.label });
    this.#gate = new NotificationGate({
      maxQueuedBytes: options.maxQueuedNotificationBytes,
      onPressure: (congested) => this.#onPressure(congested),
    });
    if (options.keepaliveIntervalMs > 0) {
      this.#keepalive = setInterval(() => this.#ping(), options.keepaliveIntervalMs);
      this.#keepalive.unref();
    }
  }

  /** Starts feeding frames to `processor`; the transport reports the socket's end to it. */
  attach(processor: ConnectionProcessor): void {
    this.#processor = processor;
    const socket = this.#socket;
    socket.on('message', (data, isBinary) => this.#onFrame(data, isBinary));
    socket.on('pong', () => {
      this.#missedPings = 0;
      const mark = this.#pingMarks.shift();
      if (mark !== undefined) this.#readUpTo = mark;
      this.#lastHeardMs = performance.now();
    });
    socket.on('ping', () => {
      this.#lastHeardMs = performance.now();
    });
    socket.on('error', (error) => {
      this.#logger.debug('websocket error', { connection: this.label, error });
    });
    socket.on('close', (code, reason) => {
      if (this.#keepalive) clearInterval(this.#keepalive);
      clearTimeout(this.#probe);
      this.#turn.cancel();
      this.#slab.drop();
      processor.disconnected(`websocket closed (${code}${reason.length > 0 ? ` ${reason.toString()}` : ''})`);
    });
  }

  /**
   * The client accepts `process/outputBatch` (it said so in `initialize`): from now on, output
   * that piles up within one turn of the event loop travels as one frame per process, on either
   * codec. A client that does not ask (the original's) gets one chunk per `process/output`.
   */
  enableOutputBatches(): void {
    this.#batchOutput = true;
  }

  sendResponse(message: RpcMessage, codec: CodecName): void {
    if (this.#socket.readyState !== this.#socket.OPEN) return;
    this.#releaseHeld();
    this.#turn.begin();
    const frame = this.#encoder.frame(message, codec);
    if (frame === undefined) return;
    this.#gate.observe(this.#socket.bufferedAmount, frame.length);
    this.#send(frame, codec);
  }

  sendNotification(message: RpcMessage): void {
    if (this.#socket.readyState !== this.#socket.OPEN) return;
    const output = isOutput(message);
    if (this.#batchOutput && this.#held.hold(message)) {
      this.#turn.begin(true);
      if (this.#held.bytes >= MAX_OUTPUT_BATCH_BYTES) this.#releaseHeld();
      return;
    }
    // Nothing overtakes held output: an exit or close follows its process's last chunk.
    this.#releaseHeld();
    this.#turn.begin(output);
    this.#sendNotificationNow(message);
  }

  #sendNotificationNow(message: RpcMessage): void {
    const codec = this.#codec ?? 'json';
    // Msgpack batches go as fragments whose chunks are not copied; any other output frame is laid
    // out in the connection's slab (one buffer per turn, written to the TCP socket as it is).
    const parts = codec === 'msgpack' ? this.#encoder.parts(message) : undefined;
    const laidOut =
      parts === undefined && this.#raw !== undefined ? this.#encoder.laidOut(message, codec) : undefined;
    // Any other notification goes out as UTF-8 bytes in a text frame (JSON) or a binary frame.
    const frame =
      laidOut === undefined && parts === undefined ? this.#encoder.frame(message, codec, true) : undefined;
    if (laidOut === undefined && parts === undefined && frame === undefined) return;
    const length = laidOut?.size ?? (parts === undefined ? frame!.length : byteLengthOf(parts));
    const backlog = this.#socket.bufferedAmount + this.#slab.pending;
    if (!admitNotification(this.#gate, backlog, length, { logger: this.#logger, connection: this.label }))
      return;
    if (laidOut !== undefined)
      this.#sentBytes += this.#slab.append(laidOut, codec === 'msgpack', this.#writeRaw);
    else if (parts === undefined) this.#send(frame!, codec);
    else this.#sendParts(parts);
  }

  close(reason: string): void {
    if (this.#socket.readyState === this.#socket.CLOSED || this.#socket.readyState === this.#socket.CLOSING)
      return;
    this.#releaseHeld();
    this.#socket.close(CLOSE_PROTOCOL_ERROR, reason.slice(0, MAX_CLOSE_REASON_CHARS));
  }

  pauseReading(): void {
    this.#pauseFor('queue');
  }

  resumeReading(): void {
    this.#resumeFor('queue');
  }

  get #paused(): boolean {
    return this.#pausedBy.size > 0;
  }

  #pauseFor(reason: 'queue' | 'budget'): void {
    this.#pausedBy.add(reason);
    this.#socket.pause();
  }

  /** Reading goes on once no reason holds it. */
  #resumeFor(reason: 'queue' | 'budget'): void {
    this.#pausedBy.delete(reason);
    if (this.#paused) return;
    this.#missedPings = 0;
    this.#socket.resume();
  }

  /**
   * Pings the peer; unless it sends something (the pong, or any frame) within `timeoutMs`, the
   * socket is destroyed, which detaches its session. Not dead, whatever the silence: a transport
   * that stopped reading (the pong is among the unread frames), or a peer that drained part of
   * our send backlog meanwhile (it is reading, just behind a queue). One probe at a time.
   */
  probeLiveness(timeoutMs: number): void {
    if (this.#probe !== undefined || this.#socket.readyState !== this.#socket.OPEN) return;
    const startedMs = performance.now();
    const backlog = this.#socket.bufferedAmount;
    this.#sendPing();
    this.#probe = setTimeout(() => {
      this.#probe = undefined;
      if (this.#socket.readyState !== this.#socket.OPEN) return;
      if (this.#lastHeardMs >= startedMs || this.#paused || this.#socket.bufferedAmount < backlog) {
        this.#logger.debug('connection passed the liveness check; it keeps its session', {
          connection: this.label,
        });
        return;
      }
      this.#logger.warn(
        'peer did not answer a liveness ping; dropping connection so its session can be resumed',
        {
          connection: this.label,
          timeoutMs,
        },
      );
      this.#socket.terminate();
    }, timeoutMs);
    this.#probe.unref();
  }

  /** Closes with `code` (e.g. 1001 on server shutdown). */
  shutdown(code: number, reason: string): void {
    this.#releaseHeld();
    if (
      this.#socket.readyState === this.#socket.OPEN ||
      this.#socket.readyState === this.#socket.CONNECTING
    ) {
      this.#socket.close(code, reason);
    }
  }

  /** Destroys the socket without a close handshake. */
  terminate(): void {
    this.#socket.terminate();
  }

  #onFrame(data: RawData, isBinary: boolean): void {
    this.#partialFrames?.completed();
    this.#missedPings = 0;
    this.#lastHeardMs = performance.now();
    const bytes = Array.isArray(data)
      ? Buffer.concat(data)
      : Buffer.isBuffer(data)
        ? data
        : Buffer.from(data);
    noteInboundFrame(bytes.byteLength);
    const codec = sniffCodec(bytes, isBinary);
    this.#codec ??= codec;
    let message: RpcMessage;
    try {
      message = this.#codecs[codec].decode(bytes);
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      this.#processor?.receiveMalformed(
        `failed to parse websocket JSON-RPC message from ${this.label}: ${detail}`,
        codec,
      );
      return;
    }
    this.#processor?.receive(message, codec, bytes.byteLength);
  }

  /** Sends the held output (batched per process) and the slab's frames, before any other frame. */
  #releaseHeld(): void {
    if (!this.#held.empty) {
      for (const message of this.#held.take()) {
        if (this.#socket.readyState !== this.#socket.OPEN) return;
        this.#sendNotificationNow(message);
      }
    }
    this.#releaseSlab();
  }

  /** Writes laid-out frames to the TCP socket (nothing `ws` queued can be behind: it queues none). */
  readonly #writeRaw = (segment: Buffer): void => {
    const raw = this.#raw!;
    if (raw.destroyed) return;
    this.#slab.writeSegment(raw, segment, this.#gate.congested ? this.#onFlushed : undefined);
  };

  /** Queues one frame; while congested, its flush is reported so the gate sees the backlog drain. */
  #send(frame: string | Uint8Array, codec: CodecName): void {
    this.#releaseSlab();
    const onFlushed = this.#gate.congested ? this.#onFlushed : undefined;
    this.#sentBytes += typeof frame === 'string' ? frame.length : frame.byteLength;
    this.#socket.send(frame, { binary: codec === 'msgpack' }, onFlushed);
  }

  /**
   * Queues one binary message as consecutive WebSocket fragments (nothing else is sent between
   * them: the caller runs to completion), so its byte fields go to the socket as they are.
   */
  #sendParts(parts: readonly Uint8Array[]): void {
    this.#releaseSlab();
    const last = parts.length - 1;
    this.#sentBytes += byteLengthOf(parts);
    for (let i = 0; i < last; i++) this.#socket.send(parts[i]!, { binary: true, fin: false });
    this.#socket.send(
      parts[last]!,
      { binary: true, fin: true },
      this.#gate.congested ? this.#onFlushed : undefined,
    );
  }

  readonly #onFlushed = (): void => this.#gate.flushed(this.#socket.bufferedAmount);

  #onPressure(congested: boolean): void {
    this.#logger.debug(
      congested
        ? "client backlog over the pause mark; holding its processes' output back"
        : "client backlog drained; reading its processes' output again",
      { connection: this.label, bufferedBytes: this.#socket.bufferedAmount },
    );
    this.#processor?.outboundPressure(congested);
  }

  /** Writes the slab's frames first: whatever `ws` sends next must not overtake them. */
  #releaseSlab(): void {
    const segment = this.#slab.take();
    if (segment !== undefined) this.#writeRaw(segment);
  }

  #ping(): void {
    if (this.#socket.readyState !== this.#socket.OPEN) return;
    // While we stopped reading, the peer's pongs sit unread: that is our backlog, not a dead peer.
    // While the peer has not read what we sent, our pings wait behind it: a client that reads
    // slowly (its children held back meanwhile) is not dead either, whether the unread data is
    // still in our queue or already in the kernel's buffers (megabytes on a fast link: our queue
    // is empty until they fill). A dead peer with data in flight is caught by TCP's
    // retransmission timeout, and a resume of its session probes it (`probeLiveness`).
    const unread = this.#socket.bufferedAmount > 0 || this.#sentBytes > this.#readUpTo;
    if (this.#paused || unread) this.#missedPings = 0;
    this.#logger.trace('keepalive ping', { connection: this.label, missed: this.#missedPings });
    if (this.#missedPings >= KEEPALIVE_MISSES_BEFORE_TERMINATE) {
      this.#logger.warn('peer stopped answering pings; dropping connection', { connection: this.label });
      this.#socket.terminate();
      return;
    }
    this.#missedPings++;
    this.#sendPing();
  }

  #sendPing(): void {
    this.#releaseSlab(); // the mark counts the slab's frames: they go first
    this.#pingMarks.push(this.#sentBytes);
    this.#socket.ping();
  }
}

function isOutput(message: RpcMessage): boolean {
  return message.kind === 'notification' && message.method === 'process/output';
}
