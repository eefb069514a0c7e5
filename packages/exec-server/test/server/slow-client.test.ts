// A client that stops reading: the server pauses its notifications (bounded memory) instead of
// buffering without limit or stalling the child; output stays readable with process/read.
import { pathToFileUri } from '@execd/protocol';
import { afterEach, expect, test } from 'vitest';
import { expectNoOpenSockets } from '../helpers/open-sockets.ts';
import { ProcessTracker } from '../helpers/process-tracker.ts';
import { RawWsClient } from '../helpers/raw-ws-client.ts';
import { captureLogger, startTestServer } from '../helpers/test-server.ts';
import { waitFor } from '../helpers/wait-for.ts';

const tracker = new ProcessTracker();

afterEach(async () => {
  await tracker.expectNoSurvivors();
  await expectNoOpenSockets();
});

test('a stalled client loses pushed notifications, not its process or its output', async () => {
  const { logger, records } = captureLogger();
  await using server = await startTestServer({ maxQueuedNotificationBytes: 256 * 1024, logger });
  await using client = await RawWsClient.connect(server.url);
  await client.initialize();
  await client.call('process/start', {
    processId: 'flood',
    // 32 MiB: far more than the loopback socket buffers plus the notification budget.
    argv: ['head', '-c', String(32 * 1024 * 1024), '/dev/zero'],
    cwd: pathToFileUri(process.cwd()),
    env: {},
    tty: false,
  });
  const list = await client.call<{ processes: { pid?: number }[] }>('process/list', {});
  for (const entry of list.processes) if (entry.pid !== undefined) tracker.add(entry.pid);
  client.pause();
  await waitFor(() => records.some((record) => record.message.startsWith('client too slow')), {
    what: 'the server to pause notifications',
    timeoutMs: 60_000,
  });
  client.resume();

  // The child ran to completion regardless and its end is readable.
  const read = await waitFor(
    async () => {
      const result = await client.call<{ closed: boolean; exitCode: number | null; nextSeq: number }>(
        'process/read',
        {
          processId: 'flood',
          afterSeq: 0,
          maxBytes: 1,
          waitMs: 1_000,
        },
      );
      return result.closed && result;
    },
    { what: 'the flood to finish', timeoutMs: 60_000 },
  );
  expect(read.exitCode).toBe(0);

  // Some pushed events were dropped while the client was too slow (every seq up to `closed` is
  // an event), and the connection still works.
  const final = await client.call<{ nextSeq: number }>('process/read', {
    processId: 'flood',
    afterSeq: 0,
    maxBytes: null,
  });
  const pushed = client.notifications().filter((message) => String(message.method).startsWith('process/'));
  expect(pushed.length).toBeLessThan(final.nextSeq - 1);
  expect(await client.call('environment/status', {})).toEqual({ status: 'ready' });
});
