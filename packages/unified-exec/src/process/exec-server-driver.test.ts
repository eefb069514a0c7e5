import { OutputGapError, type ReadResponse, type SandboxType, type WriteResponse } from '@execd/protocol';
import type { ExecProcess, ExecProcessEvent, ExecReadOptions } from '@execd/protocol/contract';
import { describe, expect, test } from 'vitest';
import { HeadTailBuffer } from '../output/head-tail-buffer.ts';
import { EVENT_STREAM_CLOSED_MESSAGE, ExecServerDriver } from './exec-server-driver.ts';
import { UnifiedExecProcess } from './unified-exec-process.ts';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

/**
 * A scripted ExecProcess (spec §8.8 cases): each `events()` call replays the next scripted
 * stream, each `read()` answers with the next scripted response.
 */
class ScriptedProcess implements ExecProcess {
  readonly processId = '1000';
  readonly sandboxType: SandboxType | undefined;
  readonly reads: ExecReadOptions[] = [];
  readonly eventCalls: Array<number | undefined> = [];
  writeResult: WriteResponse | Error = { status: 'accepted' };
  terminated = 0;
  readonly #streams: Array<Array<ExecProcessEvent | Error>>;
  readonly #responses: ReadResponse[];

  constructor(
    streams: Array<Array<ExecProcessEvent | Error>>,
    responses: ReadResponse[] = [],
    sandboxType?: SandboxType,
  ) {
    this.#streams = streams;
    this.#responses = responses;
    this.sandboxType = sandboxType;
  }

  async *events(options: { afterSeq?: number | undefined } = {}): AsyncGenerator<ExecProcessEvent> {
    this.eventCalls.push(options.afterSeq);
    for (const item of this.#streams.shift() ?? []) {
      if (item instanceof Error) throw item;
      yield item;
    }
  }

  async read(options: ExecReadOptions = {}): Promise<ReadResponse> {
    this.reads.push(options);
    const response = this.#responses.shift();
    if (response === undefined) throw new Error('no scripted read left');
    return response;
  }

  async write(): Promise<WriteResponse> {
    if (this.writeResult instanceof Error) throw this.writeResult;
    return this.writeResult;
  }

  async interrupt(): Promise<void> {}
  async terminate(): Promise<{ running: boolean }> {
    this.terminated += 1;
    return { running: true };
  }
  async resize(): Promise<{ resized: boolean }> {
    return { resized: false };
  }
  async close(): Promise<void> {}
  async [Symbol.asyncDispose](): Promise<void> {}
}

function response(fields: Partial<ReadResponse>): ReadResponse {
  return {
    chunks: [],
    nextSeq: 1,
    exited: false,
    exitCode: null,
    closed: false,
    failure: null,
    sandboxDenied: false,
    ...fields,
  } as ReadResponse;
}

async function start(process: ScriptedProcess): Promise<UnifiedExecProcess> {
  return UnifiedExecProcess.start(new ExecServerDriver(process), { tty: false, earlyExitGraceMs: 5_000 });
}

function drained(process: UnifiedExecProcess): string {
  const buffer = new HeadTailBuffer();
  process.drainInto(buffer);
  return new TextDecoder().decode(buffer.toBytes());
}

describe('ExecServerDriver (spec §4.8)', () => {
  test('a complete event stream needs no read', async () => {
    const scripted = new ScriptedProcess([
      [
        { type: 'output', seq: 1, stream: 'stdout', chunk: bytes('hello\n') },
        { type: 'exited', seq: 2, exitCode: 0, sandboxDenied: false },
        { type: 'closed', seq: 3 },
      ],
    ]);
    await using process = await start(scripted);
    expect([process.hasExited, process.exitCode, process.outputClosed]).toEqual([true, 0, true]);
    expect(drained(process)).toBe('hello\n');
    expect(scripted.reads).toEqual([]);
  });

  test('an exit without sandboxDenied (legacy server) is completed by a read', async () => {
    const scripted = new ScriptedProcess(
      [
        [
          { type: 'output', seq: 1, stream: 'stdout', chunk: bytes('a') },
          { type: 'exited', seq: 2, exitCode: 3 },
        ],
      ],
      [response({ nextSeq: 4, exited: true, exitCode: 3, closed: true })],
    );
    await using process = await start(scripted);
    expect(scripted.reads).toEqual([{ afterSeq: 1, waitMs: 0 }]);
    expect([process.exitCode, process.outputClosed]).toEqual([3, true]);
    expect(drained(process)).toBe('a');
  });

  test('a skipped seq is recovered by a read, then following resumes after it', async () => {
    const scripted = new ScriptedProcess(
      [
        [
          { type: 'output', seq: 1, stream: 'stdout', chunk: bytes('one ') },
          { type: 'output', seq: 3, stream: 'stdout', chunk: bytes('three ') },
        ],
        [
          { type: 'output', seq: 3, stream: 'stdout', chunk: bytes('duplicate ') },
          { type: 'exited', seq: 4, exitCode: 0, sandboxDenied: false },
          { type: 'closed', seq: 5 },
        ],
      ],
      [
        response({
          chunks: [
            { seq: 2, stream: 'stdout', chunk: bytes('two ') },
            { seq: 3, stream: 'stdout', chunk: bytes('three ') },
          ],
          nextSeq: 4,
        }),
      ],
    );
    await using process = await start(scripted);
    expect(scripted.eventCalls).toEqual([undefined, 3]);
    expect(drained(process)).toBe('one two three ');
    expect(process.exitCode).toBe(0);
  });

  test('a follower that fell out of retention recovers through a read', async () => {
    const scripted = new ScriptedProcess(
      [[{ type: 'output', seq: 1, stream: 'pty', chunk: bytes('x') }, new OutputGapError(800)]],
      [
        response({
          chunks: [{ seq: 800, stream: 'pty', chunk: bytes('y') }],
          nextSeq: 802,
          exited: true,
          exitCode: 0,
          closed: true,
        }),
      ],
    );
    await using process = await start(scripted);
    expect(drained(process)).toBe('xy');
    expect(process.outputClosed).toBe(true);
  });

  test('the executor sandbox verdict makes an early exit a sandbox denial, whatever the sandbox type', async () => {
    const scripted = new ScriptedProcess([
      [
        { type: 'output', seq: 1, stream: 'stderr', chunk: bytes('blocked\n') },
        { type: 'exited', seq: 2, exitCode: 1, sandboxDenied: true },
        { type: 'closed', seq: 3 },
      ],
    ]);
    const error = await start(scripted).catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ kind: 'sandboxDenied', deniedOutput: { exitCode: 1, text: 'blocked\n' } });
  });

  test('a stream that ends before `closed` fails the process; a failed event keeps its message', async () => {
    const ended = new ScriptedProcess([[{ type: 'output', seq: 1, stream: 'stdout', chunk: bytes('x') }]]);
    await using first = await start(ended);
    expect(first.failureMessage).toBe(EVENT_STREAM_CLOSED_MESSAGE);
    const failed = new ScriptedProcess([[{ type: 'failed', message: 'exec-server transport disconnected' }]]);
    await using second = await start(failed);
    expect(second.failureMessage).toBe('exec-server transport disconnected');
    expect(second.hasExited).toBe(true);
  });

  test('write statuses: accepted, closed stdin (marks exited), transport errors', async () => {
    const scripted = new ScriptedProcess([[]]);
    const stream = scripted; // events end at once; the write semantics do not depend on them
    await using process = await UnifiedExecProcess.start(new ExecServerDriver(stream), {
      tty: true,
      earlyExitGraceMs: 0,
    });
    await expect(process.write(bytes('ok'))).resolves.toBeUndefined();
    scripted.writeResult = new Error('connection reset');
    await expect(process.write(bytes('x'))).rejects.toMatchObject({ kind: 'processFailed' });
    scripted.writeResult = { status: 'starting' };
    await expect(process.write(bytes('x'))).rejects.toMatchObject({ kind: 'writeToStdin' });
    scripted.writeResult = { status: 'stdinClosed' };
    await expect(process.write(bytes('x'))).rejects.toMatchObject({ kind: 'writeToStdin' });
    expect(process.hasExited).toBe(true);
  });

  test('closing an open process terminates it (dropping terminates, as the original)', async () => {
    const scripted = new ScriptedProcess([[{ type: 'output', seq: 1, stream: 'stdout', chunk: bytes('x') }]]);
    const process = await start(scripted);
    await process.close();
    expect(scripted.terminated).toBe(1);
  });
});
