import { OutputGapError, type ReadResponse, utf8 } from '@execd/protocol';
import type { SequencedEvent } from '@execd/protocol/contract';
import { describe, expect, test } from 'vitest';
import { replayFromServer } from './server-replay.ts';

function answer(partial: Partial<Omit<ReadResponse, 'chunks'>> & { chunks: number[] }): ReadResponse {
  return {
    exited: false,
    exitCode: null,
    closed: false,
    failure: null,
    sandboxDenied: false,
    nextSeq: (partial.chunks.at(-1) ?? 0) + 1,
    ...partial,
    chunks: partial.chunks.map((seq) => ({ seq, stream: 'stdout' as const, chunk: utf8(`c${seq}`) })),
  };
}

async function collect(iterable: AsyncIterable<SequencedEvent>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const event of iterable) out.push(`${event.seq}:${event.type}`);
  return out;
}

describe('replayFromServer', () => {
  test('pages chunks below the log, asking from the last one seen', async () => {
    const asked: number[] = [];
    const pages = [answer({ chunks: [3, 4] }), answer({ chunks: [5, 6, 7] })];
    const events = await collect(
      replayFromServer(2, {
        read: async (afterSeq) => {
          asked.push(afterSeq);
          return pages.shift()!;
        },
        stopBefore: 7,
        exitInLog: false,
      }),
    );
    expect(asked).toEqual([2, 4]);
    expect(events).toEqual(['3:output', '4:output', '5:output', '6:output']);
  });

  test('a one-seq hole of an exited process is its exit; a wider one is a gap', async () => {
    const exitedAnswer = answer({ chunks: [3], exited: true, exitCode: 2 });
    expect(
      await collect(replayFromServer(1, { read: async () => exitedAnswer, stopBefore: 4, exitInLog: false })),
    ).toEqual(['2:exited', '3:output']);
    const lost = collect(
      replayFromServer(0, { read: async () => answer({ chunks: [4] }), stopBefore: 5, exitInLog: false }),
    );
    await expect(lost).rejects.toBeInstanceOf(OutputGapError);
    await expect(lost).rejects.toMatchObject({ firstRetainedSeq: 4 });
  });

  test("the server's firstRetainedSeq is reported; a failed session ends the replay quietly", async () => {
    const gap = collect(
      replayFromServer(0, {
        read: async () => answer({ chunks: [9], firstRetainedSeq: 9 }),
        stopBefore: 12,
        exitInLog: false,
      }),
    );
    await expect(gap).rejects.toMatchObject({ firstRetainedSeq: 9 });
    const failed = answer({ chunks: [], failure: 'gone' });
    expect(
      await collect(replayFromServer(0, { read: async () => failed, stopBefore: 5, exitInLog: false })),
    ).toEqual([]);
  });
});
