import { ExecError } from '@execd/protocol';
import { describe, expect, test } from 'vitest';
import { AcceptedChannelSource, REPLACEMENT_IN_PROGRESS_MESSAGE } from './accepted-channel-source.ts';
import type { FrameChannel } from './frame-channel.ts';

/** A stand-in channel: the source only hands channels on (and terminates one nobody took). */
function channel(): FrameChannel & { terminated: boolean } {
  return {
    isOpen: true,
    binaryFrames: true,
    pings: true,
    terminated: false,
    listen: () => {},
    send: () => {},
    ping: () => {},
    close: () => {},
    terminate() {
      this.terminated = true;
    },
  };
}

describe('AcceptedChannelSource', () => {
  test('hands a queued channel out, and one that arrives while waiting', async () => {
    const source = new AcceptedChannelSource();
    const first = channel();
    source.offer(first);
    expect(await source.next(1_000)).toBe(first);
    source.attemptDone();
    const waiting = source.next(10_000);
    const second = channel();
    source.offer(second);
    expect(await waiting).toBe(second);
  });

  test('refuses a second offer until the attempt on the first one ended', () => {
    const source = new AcceptedChannelSource();
    source.offer(channel());
    let error: unknown;
    try {
      source.offer(channel());
    } catch (caught) {
      error = caught;
    }
    expect(ExecError.is(error) && error.code).toBe('protocol');
    expect((error as Error).message).toBe(REPLACEMENT_IN_PROGRESS_MESSAGE);
    source.attemptDone();
    expect(() => source.offer(channel())).not.toThrow();
  });

  test('a wait times out with connectTimeout, or ends with aborted when cancelled', async () => {
    const source = new AcceptedChannelSource();
    await expect(source.next(1)).rejects.toMatchObject({ code: 'connectTimeout' });
    const cancel = new AbortController();
    const waiting = source.next(10_000, cancel.signal);
    cancel.abort();
    await expect(waiting).rejects.toMatchObject({ code: 'aborted' });
    // Nobody waits any more: an offer is queued, not lost.
    const late = channel();
    source.offer(late);
    expect(await source.next(1_000)).toBe(late);
  });

  test('close terminates a channel nobody took and refuses further offers', () => {
    const source = new AcceptedChannelSource();
    const queued = channel();
    source.offer(queued);
    source.close();
    expect(queued.terminated).toBe(true);
    expect(() => source.offer(channel())).toThrow(expect.objectContaining({ code: 'transportClosed' }));
  });
});
