// Helpers of the ExecBackend scenario suite: they use only the ExecBackend/ExecProcess interfaces,
// so the same code drives the in-process backend and a remote one.
import { tmpdir } from 'node:os';
import { type ExecParams, fromUtf8, pathToFileUri, type ReadResponse } from '@execd/protocol';
import type { ExecProcess, ExecProcessEvent } from '@execd/protocol/contract';

/** Generous: the machine is small and shared. */
export const SCENARIO_DEADLINE_MS = 20_000;

/** `process/start` params with the suite's defaults (pipes, stdin closed, PATH only). */
export function execParams(
  processId: string,
  argv: string[],
  overrides: Partial<ExecParams> = {},
): ExecParams {
  return {
    processId,
    argv,
    cwd: pathToFileUri(tmpdir()),
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    tty: false,
    pipeStdin: false,
    enforceManagedNetwork: false,
    ...overrides,
  };
}

/** Everything read from a process until a condition held. */
export interface ReadOutcome {
  readonly text: string;
  readonly stdout: string;
  readonly stderr: string;
  /** The last response. */
  readonly last: ReadResponse;
  /** Pass as `afterSeq` to continue. */
  readonly afterSeq: number;
}

/**
 * Long-polls `read` from `afterSeq` until `until(outcome)` holds (default: closed), within the
 * suite deadline. Output is concatenated in seq order.
 */
export async function readUntil(
  proc: ExecProcess,
  options: { readonly afterSeq?: number; readonly until?: (outcome: ReadOutcome) => boolean } = {},
): Promise<ReadOutcome> {
  const until = options.until ?? ((outcome) => outcome.last.closed);
  const deadline = performance.now() + SCENARIO_DEADLINE_MS;
  // Streaming decoders: text is built incrementally (a multi-byte character may span chunks).
  const decoders = { all: new TextDecoder(), stdout: new TextDecoder(), stderr: new TextDecoder() };
  const text = { all: '', stdout: '', stderr: '' };
  let afterSeq = options.afterSeq ?? 0;
  for (;;) {
    const last = await proc.read({ afterSeq, waitMs: 500 });
    for (const chunk of last.chunks) {
      text.all += decoders.all.decode(chunk.chunk, { stream: true });
      if (chunk.stream === 'stderr') text.stderr += decoders.stderr.decode(chunk.chunk, { stream: true });
      else text.stdout += decoders.stdout.decode(chunk.chunk, { stream: true });
    }
    afterSeq = last.nextSeq - 1;
    const outcome: ReadOutcome = { text: text.all, stdout: text.stdout, stderr: text.stderr, last, afterSeq };
    if (until(outcome)) return outcome;
    if (last.closed) throw new Error(`process closed before the condition held; output: ${outcome.text}`);
    if (performance.now() > deadline) throw new Error(`timed out reading; output so far: ${outcome.text}`);
  }
}

/** Collects events until `closed` (or `failed`), within the suite deadline. */
export async function collectEvents(
  proc: ExecProcess,
  options: { readonly afterSeq?: number } = {},
): Promise<ExecProcessEvent[]> {
  const events: ExecProcessEvent[] = [];
  const cancelSignal = AbortSignal.timeout(SCENARIO_DEADLINE_MS);
  for await (const event of proc.events({ afterSeq: options.afterSeq, cancelSignal })) {
    events.push(event);
    if (event.type === 'closed' || event.type === 'failed') break;
  }
  return events;
}

/** An event reduced to what the scenarios compare (chunk bytes as text, no optional flags). */
export function summarise(event: ExecProcessEvent): unknown {
  switch (event.type) {
    case 'output':
      return { type: 'output', seq: event.seq, stream: event.stream, text: fromUtf8(event.chunk) };
    case 'exited':
      return { type: 'exited', seq: event.seq, exitCode: event.exitCode };
    default:
      return event;
  }
}

/** Output events' text, concatenated. */
export function outputText(events: readonly ExecProcessEvent[]): string {
  return fromUtf8(Buffer.concat(events.flatMap((e) => (e.type === 'output' ? [e.chunk] : []))));
}
