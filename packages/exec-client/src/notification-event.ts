import { decodeParams } from '@execd/protocol';
import type { SequencedEvent } from '@execd/protocol/contract';

/** A process notification as an event of one process. */
export interface RoutedEvent {
  readonly processId: string;
  readonly event: SequencedEvent;
}

/**
 * Decodes a `process/output|exited|closed` notification into the event it announces, and an
 * execd `process/outputBatch` into its output events (oldest first); undefined for any other
 * method. Throws an RpcError (`invalidParams`) for params that do not validate.
 */
export function notificationEvent(method: string, params: unknown): RoutedEvent | RoutedEvent[] | undefined {
  switch (method) {
    case 'process/outputBatch': {
      const p = decodeParams('process/outputBatch', params);
      return p.chunks.map(({ seq, stream, chunk }) => ({
        processId: p.processId,
        event: { type: 'output', seq, stream, chunk },
      }));
    }
    case 'process/output': {
      const p = decodeParams('process/output', params);
      return {
        processId: p.processId,
        event: { type: 'output', seq: p.seq, stream: p.stream, chunk: p.chunk },
      };
    }
    case 'process/exited': {
      const p = decodeParams('process/exited', params);
      return {
        processId: p.processId,
        event: { type: 'exited', seq: p.seq, exitCode: p.exitCode, sandboxDenied: p.sandboxDenied },
      };
    }
    case 'process/closed': {
      const p = decodeParams('process/closed', params);
      return { processId: p.processId, event: { type: 'closed', seq: p.seq } };
    }
    default:
      return undefined;
  }
}
