import { abortedBy, type ReadParams, type ReadResponse, RpcError } from '@execd/protocol';
import { MAX_TIMER_MS } from './limits.ts';
import type { ProcessRecord } from './process-record.ts';

/**
 * The `process/read` long-poll (spec §2.4): answers at once when there is output after
 * `afterSeq`, the process has closed, or an exit the caller has not seen; otherwise waits for the
 * next event until `waitMs` passes. The entry is looked up again after every wait (it may have
 * been removed). `cancelSignal` abandons the wait with an `aborted` ExecError.
 */
export async function longPollRead(
  lookup: (processId: string) => ProcessRecord | undefined,
  params: ReadParams,
  cancelSignal?: AbortSignal,
): Promise<ReadResponse> {
  const afterSeq = params.afterSeq ?? 0;
  const deadline = performance.now() + Math.min(params.waitMs ?? 0, MAX_TIMER_MS);
  for (;;) {
    const record = lookup(params.processId);
    if (record === undefined) throw new RpcError('invalidRequest', `unknown process id ${params.processId}`);
    if (record.state === 'starting') {
      throw new RpcError('invalidRequest', `process id ${params.processId} is starting`);
    }
    const response = record.read(afterSeq, params.maxBytes);
    const hasNewTerminal = response.exited && afterSeq < response.nextSeq - 1;
    const remainingMs = deadline - performance.now();
    if (response.chunks.length > 0 || response.closed || hasNewTerminal || remainingMs <= 0) return response;
    try {
      await record.changed.wait(Math.ceil(remainingMs), cancelSignal);
    } catch (reason) {
      // The wait rejects only when cancelSignal aborts.
      throw cancelSignal?.aborted ? abortedBy(cancelSignal, 'process/read') : reason;
    }
  }
}
