import { decodeResult, ExecError, type InitializeResponse } from '@execd/protocol';
import type { ResolvedClientOptions } from './client-options.ts';
import { RpcConnection, type RpcConnectionOptions } from './rpc-connection.ts';

/** The deadlines of one handshake: opening the connection, then `initialize`. */
export interface HandshakeTimeouts {
  readonly connectTimeoutMs: number;
  readonly initializeTimeoutMs: number;
}

/** What a new connection reports to its client. */
export type ConnectionHandlers = Pick<
  RpcConnectionOptions,
  'onNotification' | 'onNetworkPolicyRequest' | 'onClose'
>;

/**
 * Opens one connection as `options` say: dials `url`, spawns `command`, or (an accepted client)
 * waits for the next channel its channel source is handed.
 */
export function openConnection(
  options: ResolvedClientOptions,
  connectTimeoutMs: number,
  cancelSignal: AbortSignal,
  handlers: ConnectionHandlers,
): Promise<RpcConnection> {
  const channelSource = options.channelSource;
  return RpcConnection.open({
    url: options.url,
    command: options.command,
    openChannel:
      channelSource === undefined ? undefined : (timeoutMs, signal) => channelSource.next(timeoutMs, signal),
    token: options.token,
    codec: options.codec,
    connectTimeoutMs,
    keepaliveIntervalMs: options.keepaliveIntervalMs,
    maxFrameBytes: options.maxFrameBytes,
    logger: options.logger,
    cancelSignal,
    onNotification: handlers.onNotification,
    onNetworkPolicyRequest: handlers.onNetworkPolicyRequest,
    onClose: handlers.onClose,
  });
}

/**
 * Sends `initialize` on `conn` (resuming `resumeSessionId` when given) and checks the answer: a
 * resume must come back with the same session. `initialized` is left to the caller.
 */
export async function initializeSession(
  conn: RpcConnection,
  options: ResolvedClientOptions,
  resumeSessionId: string | undefined,
  initializeTimeoutMs: number,
): Promise<InitializeResponse> {
  const raw = await conn.request(
    'initialize',
    // `waitingForInput`: opt in to the execd extension (an original server ignores it).
    {
      clientName: options.clientName,
      resumeSessionId,
      waitingForInput: true,
      // `outputBatches`: several output chunks per frame when output piles up (execd extension,
      // either codec; an original server ignores it and sends one chunk per `process/output`).
      outputBatches: true,
    },
    { timeoutMs: initializeTimeoutMs },
  );
  const response = decodeResult('initialize', raw);
  if (resumeSessionId !== undefined && response.sessionId !== resumeSessionId) {
    throw new ExecError('protocol', `exec-server initialized an unexpected session ${response.sessionId}`);
  }
  return response;
}
