import { describe, expect, test } from 'vitest';
import { SharedWalks, type WalkQuestion } from './shared-walks.ts';

/** A walk that records its batches and finishes when the test says so. */
function controlledWalks() {
  const batches: string[][] = [];
  let finish: (() => void) | undefined;
  let fail: ((error: Error) => void) | undefined;
  let current: readonly WalkQuestion<string, string>[] = [];
  const walks = new SharedWalks<string, string>((questions) => {
    batches.push(questions.map((question) => question.query));
    current = questions;
    return new Promise<void>((resolve, reject) => {
      finish = resolve;
      fail = reject;
    });
  }, 'unanswered');
  const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
  return {
    walks,
    batches,
    current: () => current,
    finish: async () => {
      finish?.();
      await nextTurn();
    },
    fail: async (error: Error) => {
      fail?.(error);
      await nextTurn();
    },
    nextTurn,
  };
}

describe('SharedWalks', () => {
  test('questions asked together share one walk; what it leaves unanswered gets the default', async () => {
    const c = controlledWalks();
    const signal = new AbortController().signal;
    const answers = ['a', 'b', 'c'].map((query) => c.walks.ask(query, signal));
    await c.nextTurn();
    expect(c.batches).toEqual([['a', 'b', 'c']]);
    c.current()[1]?.answer('found b');
    await c.finish();
    expect(await Promise.all(answers)).toEqual(['unanswered', 'found b', 'unanswered']);
  });

  test('a question asked while a walk runs waits for the next walk', async () => {
    const c = controlledWalks();
    const signal = new AbortController().signal;
    const first = c.walks.ask('early', signal);
    await c.nextTurn();
    const late = [c.walks.ask('late-1', signal), c.walks.ask('late-2', signal)];
    await c.nextTurn();
    expect(c.batches).toEqual([['early']]);
    c.current()[0]?.answer('early answer');
    await c.finish();
    expect(await first).toBe('early answer');
    expect(c.batches).toEqual([['early'], ['late-1', 'late-2']]);
    await c.finish();
    expect(await Promise.all(late)).toEqual(['unanswered', 'unanswered']);
  });

  test('an asker that gives up is rejected with its reason; the walk sees it settled, the others carry on', async () => {
    const c = controlledWalks();
    const quitter = new AbortController();
    const stays = c.walks.ask('stays', new AbortController().signal);
    const leaves = c.walks.ask('leaves', quitter.signal);
    await c.nextTurn();
    quitter.abort(new Error('gave up'));
    await expect(leaves).rejects.toThrow('gave up');
    expect(c.current().map((question) => question.settled)).toEqual([false, true]);
    c.current()[1]?.answer('too late'); // ignored
    c.current()[0]?.answer('kept');
    await c.finish();
    expect(await stays).toBe('kept');
  });

  test('a failed walk rejects what it had not answered; the next walk still runs', async () => {
    const c = controlledWalks();
    const signal = new AbortController().signal;
    const answered = c.walks.ask('answered', signal);
    const open = c.walks.ask('open', signal).catch((error: Error) => `rejected: ${error.message}`);
    await c.nextTurn();
    c.current()[0]?.answer('yes');
    await c.fail(new Error('/proc is gone'));
    expect(await answered).toBe('yes');
    expect(await open).toBe('rejected: /proc is gone');
    const later = c.walks.ask('later', signal);
    await c.nextTurn();
    await c.finish();
    expect(await later).toBe('unanswered');
  });

  test('a walk that never ends holds up the next one only until its askers have given up', async () => {
    const c = controlledWalks();
    const quitter = new AbortController();
    const stuck = c.walks.ask('stuck', quitter.signal).catch((error: Error) => error.message);
    await c.nextTurn();
    const next = c.walks.ask('next', new AbortController().signal);
    await c.nextTurn();
    expect(c.batches).toEqual([['stuck']]);
    quitter.abort(new Error('timed out')); // the walk itself never returns
    expect(await stuck).toBe('timed out');
    await c.nextTurn();
    expect(c.batches).toEqual([['stuck'], ['next']]);
    c.current()[0]?.answer('answered');
    expect(await next).toBe('answered');
  });

  test('an already aborted signal is refused at once, without a walk', async () => {
    const c = controlledWalks();
    await expect(c.walks.ask('x', AbortSignal.abort(new Error('no')))).rejects.toThrow('no');
    expect(c.batches).toEqual([]);
  });
});
