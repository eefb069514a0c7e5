/** What a {@link FrameChannel} reports to its connection. */
export interface FrameChannelHandlers {
  /**
   * One whole frame (a WebSocket message, or one line of the stdio stream). A binary WebSocket
   * message that arrived in several fragments comes as them, not joined (the codec may read them
   * as they are).
   */
  onFrame(frame: Buffer | readonly Buffer[], isBinary: boolean): void;
  /** Traffic that is not a frame (a pong): the peer is alive. */
  onActivity(): void;
  /** An error; the close that follows carries the reason. */
  onError(error: Error): void;
  /** Once, when the channel is gone: a close code (WebSocket) and a readable reason. */
  onClose(code: number | undefined, reason: string): void;
}

/**
 * A message channel to an exec-server under one `RpcConnection`: a WebSocket, or the stdin and
 * stdout of a spawned command (newline-delimited JSON). It carries frames; the connection owns
 * ids, codecs and pending calls.
 */
export interface FrameChannel {
  /** True until the channel closed or began closing. */
  readonly isOpen: boolean;
  /** False when only text frames can be carried (stdio: the JSON codec only). */
  readonly binaryFrames: boolean;
  /** True when `ping()` probes the peer (the connection's keepalive runs only then). */
  readonly pings: boolean;
  /** Starts delivering events; called once by the connection. */
  listen(handlers: FrameChannelHandlers): void;
  send(frame: string | Uint8Array, binary: boolean): void;
  ping(): void;
  /** Closes gracefully with a bounded wait, then destroys; `onClose` follows. Idempotent. */
  close(): void;
  /** Destroys at once; `onClose` follows. */
  terminate(): void;
}
