/** JSON-RPC numbers for every error the server can send back. The single source. */
export const RPC_ERROR_NUMBERS = {
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
  notFound: -32004,
  sessionAlreadyAttached: -32010,
  transportClosed: -32000,
} as const satisfies Record<string, number>;
/** The stable string code of an error that travels over the wire. */
export type RpcErrorCode = keyof typeof RPC_ERROR_NUMBERS;

/** Every stable error code an execd API can produce. Tests and callers branch on these, never on text. */
export type ExecErrorCode =
  | RpcErrorCode
  | 'connectTimeout'
  | 'spawnFailed'
  | 'outputGap'
  | 'aborted'
  | 'stdinClosed'
  | 'frameTooLarge'
  | 'unsupported'
  | 'protocol';

// Symbol.for so that two installed copies of this package still recognise each other's errors.
const EXEC_ERROR = Symbol.for('@execd/protocol/ExecError');

/** Base of every error thrown by execd packages; `code` is stable, `message` is for people. */
export class ExecError extends Error {
  override name = 'ExecError';
  readonly code: ExecErrorCode;

  constructor(code: ExecErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }

  static {
    Object.defineProperty(ExecError.prototype, EXEC_ERROR, { value: true });
  }

  /** Works across package copies and realms, unlike `instanceof`. */
  static is(value: unknown): value is ExecError {
    return typeof value === 'object' && value !== null && EXEC_ERROR in value;
  }
}

/** The JSON-RPC error object as it travels on the wire. */
export interface WireError {
  code: number;
  message: string;
  data?: unknown;
}

const RPC_ERROR = Symbol.for('@execd/protocol/RpcError');

const NUMBER_TO_CODE = new Map<number, RpcErrorCode>(
  Object.entries(RPC_ERROR_NUMBERS).map(([k, n]) => [n, k as RpcErrorCode]),
);

/** An error that travels over the wire as a JSON-RPC error object. */
export class RpcError extends ExecError {
  override name = 'RpcError';
  declare readonly code: RpcErrorCode;
  /** The number on the wire; usually `RPC_ERROR_NUMBERS[code]`, but kept verbatim for unknown numbers. */
  readonly rpcCode: number;
  readonly data: unknown;

  constructor(
    code: RpcErrorCode,
    message: string,
    options?: ErrorOptions & { data?: unknown; rpcCode?: number },
  ) {
    super(code, message, options);
    this.rpcCode = options?.rpcCode ?? RPC_ERROR_NUMBERS[code];
    this.data = options?.data;
  }

  static {
    Object.defineProperty(RpcError.prototype, RPC_ERROR, { value: true });
  }

  /** True for an RpcError (or subclass) from any copy of this package; false for other ExecErrors. */
  static override is(value: unknown): value is RpcError {
    return typeof value === 'object' && value !== null && RPC_ERROR in value;
  }

  /** Builds an RpcError from a received error object; unknown numbers map to `internal`. */
  static fromWire(error: WireError): RpcError {
    const code = NUMBER_TO_CODE.get(error.code) ?? 'internal';
    return new RpcError(code, error.message, { data: error.data, rpcCode: error.code });
  }

  toWire(): WireError {
    return this.data === undefined
      ? { code: this.rpcCode, message: this.message }
      : { code: this.rpcCode, message: this.message, data: this.data };
  }
}

/**
 * A frame could not be decoded (bad bytes, a limit exceeded, duplicate keys, not a JSON-RPC
 * message). Always code `invalidRequest` (-32600) from the codecs; a server answers it with id -1.
 */
export class FrameDecodeError extends RpcError {
  override name = 'FrameDecodeError';
}

/** The consumer's cursor is older than the oldest retained event; resume from `firstRetainedSeq`. */
export class OutputGapError extends ExecError {
  override name = 'OutputGapError';
  readonly firstRetainedSeq: number;
  constructor(firstRetainedSeq: number, options?: ErrorOptions) {
    super('outputGap', `output before seq ${firstRetainedSeq} is no longer retained`, options);
    this.firstRetainedSeq = firstRetainedSeq;
  }
}

/** The socket closed; `closeCode` is the WebSocket close status when one was received. */
export class TransportClosedError extends ExecError {
  override name = 'TransportClosedError';
  readonly closeCode: number | undefined;
  constructor(closeCode: number | undefined, message?: string, options?: ErrorOptions) {
    super(
      'transportClosed',
      message ?? `exec-server transport closed (${closeCode ?? 'no close frame'})`,
      options,
    );
    this.closeCode = closeCode;
  }
}

/** Normalises anything thrown into an ExecError, keeping the original as `cause`. */
export function toExecError(thrown: unknown): ExecError {
  if (ExecError.is(thrown)) return thrown;
  const message = thrown instanceof Error ? thrown.message : String(thrown);
  return new RpcError('internal', message, { cause: thrown });
}

/** Converts anything thrown into the wire error object a server sends back. */
export function toWireError(thrown: unknown): WireError {
  const error = toExecError(thrown);
  if (RpcError.is(error)) return error.toWire();
  const rpcCode = (RPC_ERROR_NUMBERS as Record<string, number>)[error.code] ?? RPC_ERROR_NUMBERS.internal;
  return { code: rpcCode, message: error.message };
}
