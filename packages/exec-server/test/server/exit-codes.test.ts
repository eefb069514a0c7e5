// Exit codes on the wire for children ended by a signal, as Codex 0.169.0's exec-server reports
// them (live probes): a PTY child killed by any signal exits 1 (its PTY backend's report), a pipe
// child 128 + N.
import { pathToFileUri } from '@execd/protocol';
import { ProcessTracker, waitFor } from '@execd/test-kit';
import { describe, expect, test } from 'vitest';
import { RawWsClient } from '../helpers/raw-ws-client.ts';
import { startTestServer } from '../helpers/test-server.ts';

const CWD = pathToFileUri(process.cwd());
const tracker = new ProcessTracker();

interface Read {
  chunks: { chunk: string }[];
  nextSeq: number;
  closed: boolean;
  exitCode: number | null;
}

async function start(client: RawWsClient, processId: string, tty: boolean, script: string): Promise<void> {
  await client.call('process/start', {
    processId,
    argv: ['sh', '-c', script],
    cwd: CWD,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    tty,
    pipeStdin: !tty,
    arg0: null,
  });
  const list = await client.call<{ processes: { processId: string; pid?: number }[] }>('process/list', {});
  for (const entry of list.processes) if (entry.pid !== undefined) tracker.add(entry.pid);
}

/** Reads until `ready` was printed, so the command is past its startup. */
async function untilReady(client: RawWsClient, processId: string): Promise<void> {
  let text = '';
  let after = 0;
  await waitFor(async () => {
    const read = await client.call<Read>('process/read', { processId, afterSeq: after, waitMs: 200 });
    for (const chunk of read.chunks) text += Buffer.from(chunk.chunk, 'base64').toString();
    after = read.nextSeq - 1;
    return text.includes('ready');
  });
}

async function exitCodeOf(client: RawWsClient, processId: string): Promise<number | null> {
  let after = 0;
  for (;;) {
    const read = await client.call<Read>('process/read', { processId, afterSeq: after, waitMs: 2_000 });
    after = read.nextSeq - 1;
    if (read.closed) return read.exitCode;
  }
}

describe('exit codes of children ended by a signal', () => {
  test.each([
    ['tty, ^C written', true, 'ctrl-c', 1],
    ['tty, process/signal interrupt', true, 'signal', 1],
    ['tty, process/terminate', true, 'terminate', 1],
    ['pipes, process/signal interrupt', false, 'signal', 130],
    ['pipes, process/terminate', false, 'terminate', 137],
  ] as const)('%s (tty %s, %s) -> exit %i', async (_name, tty, how, expected) => {
    await using server = await startTestServer();
    await using client = await RawWsClient.connect(server.url);
    await client.initialize();
    await start(client, 'p', tty, 'echo ready; exec sleep 30');
    await untilReady(client, 'p');
    if (how === 'ctrl-c') {
      const chunk = Buffer.from('\u0003').toString('base64');
      expect(await client.call('process/write', { processId: 'p', chunk, writeId: '1' })).toEqual({
        status: 'accepted',
      });
    } else if (how === 'signal') {
      await client.call('process/signal', { processId: 'p', signal: 'interrupt' });
    } else {
      expect(await client.call('process/terminate', { processId: 'p' })).toEqual({ running: true });
    }
    expect(await exitCodeOf(client, 'p')).toBe(expected);
    await tracker.expectNoSurvivors();
  });

  test('a normal exit keeps its code in a tty', async () => {
    await using server = await startTestServer();
    await using client = await RawWsClient.connect(server.url);
    await client.initialize();
    await start(client, 'p', true, 'exit 7');
    expect(await exitCodeOf(client, 'p')).toBe(7);
  });
});
