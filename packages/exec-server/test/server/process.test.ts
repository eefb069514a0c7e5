// Spec §8.3 (exec-server/tests/process.rs): raw JSON-RPC over a real WebSocket, real children.
import { pathToFileUri } from '@execd/protocol';
import { afterEach, describe, expect, test } from 'vitest';
import { ProcessTracker } from '../helpers/process-tracker.ts';
import { RawWsClient } from '../helpers/raw-ws-client.ts';
import { startTestServer } from '../helpers/test-server.ts';
import { waitFor } from '../helpers/wait-for.ts';

const CWD = pathToFileUri(process.cwd());
const tracker = new ProcessTracker();

afterEach(async () => {
  await tracker.expectNoSurvivors();
});

function startParams(processId: string, argv: string[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { processId, argv, cwd: CWD, env: {}, tty: false, pipeStdin: false, arg0: null, ...extra };
}

/** Collects stdout text from a read loop until the process closed. */
async function readUntilClosed(client: RawWsClient, processId: string): Promise<{ text: string; exitCode: unknown }> {
  let after = 0;
  let text = '';
  for (;;) {
    const read = await client.call<{
      chunks: { seq: number; chunk: string }[];
      nextSeq: number;
      closed: boolean;
      exitCode: number | null;
    }>('process/read', { processId, afterSeq: after, maxBytes: null, waitMs: 2_000 });
    for (const chunk of read.chunks) text += Buffer.from(chunk.chunk, 'base64').toString('utf8');
    after = read.nextSeq - 1;
    if (read.closed) return { text, exitCode: read.exitCode };
  }
}

async function trackPids(client: RawWsClient): Promise<void> {
  const list = await client.call<{ processes: { pid?: number }[] }>('process/list', {});
  for (const entry of list.processes) if (entry.pid !== undefined) tracker.add(entry.pid);
}

describe('process methods over a websocket', () => {
  test('exec_server_starts_process_over_websocket', async () => {
    await using server = await startTestServer();
    await using client = await RawWsClient.connect(server.url);
    await client.initialize();
    const result = await client.call('process/start', startParams('proc-1', ['true']));
    expect(result).toEqual({ processId: 'proc-1', sandboxType: 'none' });
    const done = await readUntilClosed(client, 'proc-1');
    expect(done.exitCode).toBe(0);
  });
});
