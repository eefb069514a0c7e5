import { waitFor } from '@execd/test-kit';
import { afterEach, describe, expect, test } from 'vitest';
import { ProgramWorker } from './program-worker.ts';

interface Request {
  readonly id: number;
  readonly op: 'echo' | 'crash' | 'thread';
  readonly text?: string;
}
interface Reply {
  readonly id: number;
  readonly text?: string;
}

/** Echoes, answers with its thread id, or ends its thread with an uncaught error. */
const SOURCE = `(${(
  (port: import('node:worker_threads').MessagePort, threadId: number) => {
    port.on('message', (request: Request) => {
      if (request.op === 'crash') throw new Error('the program failed');
      port.postMessage({ id: request.id, text: request.op === 'echo' ? request.text : String(threadId) });
    });
  }
).toString()})(process.getBuiltinModule('node:worker_threads').parentPort, process.getBuiltinModule('node:worker_threads').threadId);`;

const workers: ProgramWorker<Request, Reply>[] = [];
afterEach(async () => {
  for (const worker of workers.splice(0)) await worker.end();
});

function programWorker(idleMs = 60_000): ProgramWorker<Request, Reply> {
  const worker = new ProgramWorker<Request, Reply>({ source: SOURCE, what: 'the test worker', idleMs });
  workers.push(worker);
  return worker;
}

describe('ProgramWorker', () => {
  test('answers each request by its id, out of order too, from one thread', async () => {
    const worker = programWorker();
    expect(worker.running).toBe(false);
    const replies = await Promise.all([
      worker.ask({ id: 2, op: 'echo', text: 'b' }),
      worker.ask({ id: 1, op: 'echo', text: 'a' }),
      worker.ask({ id: 3, op: 'thread' }),
      worker.ask({ id: 4, op: 'thread' }),
    ]);
    expect(replies.slice(0, 2)).toEqual([
      { id: 2, text: 'b' },
      { id: 1, text: 'a' },
    ]);
    expect(replies[2]?.text).toBe(replies[3]?.text);
    expect(worker.running).toBe(true);
  });

  test('a failing thread rejects what it was asked and the next request starts another', async () => {
    const worker = programWorker();
    const first = (await worker.ask({ id: 1, op: 'thread' })).text;
    const crash = worker.ask({ id: 2, op: 'crash' });
    const queued = worker.ask({ id: 3, op: 'echo', text: 'queued behind the crash' });
    await expect(crash).rejects.toThrow('the program failed');
    await expect(queued).rejects.toThrow('the program failed');
    expect(worker.running).toBe(false);
    const second = (await worker.ask({ id: 4, op: 'thread' })).text;
    expect(second).not.toBe(first);
  });

  test('ends when idle and on end() (idempotent), then starts again on demand', async () => {
    const worker = programWorker(50);
    await worker.ask({ id: 1, op: 'echo', text: 'x' });
    await waitFor(() => !worker.running, { what: 'the idle thread to end' });
    expect(await worker.ask({ id: 2, op: 'echo', text: 'y' })).toEqual({ id: 2, text: 'y' });
    // Answered before the end, or rejected by it: never left hanging.
    const settled = worker.ask({ id: 3, op: 'echo', text: 'z' }).then(
      (reply) => expect(reply).toEqual({ id: 3, text: 'z' }),
      (error: Error) => expect(error.message).toBe('the test worker was ended'),
    );
    await Promise.all([worker.end(), worker.end()]);
    await settled;
    expect(worker.running).toBe(false);
    await worker.end();
  });
});
