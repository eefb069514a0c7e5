// A client too slow for its notifications: execd's server then drops them (its notification
// gate) and the client must fill every hole with process/read: every byte exactly once, in order.
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { fromUtf8 } from '@execd/protocol';
import { afterEach, expect, test } from 'vitest';
import { ExecServerClient } from '../../src/client/exec-server-client.ts';
import { RemoteBackend } from '../../src/client/remote-backend.ts';
import { FaultProxy } from '../../src/testing/fault-proxy.ts';
import { captureLogger } from '../helpers/test-server.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { collectEvents, execParams } from '../scenarios/exec-process-helpers.ts';
import { expectNoOpenSockets, startTrackedServer, tracker } from './harness.ts';

const EMIT_RANDOM = fileURLToPath(new URL('./fixtures/emit-random.mjs', import.meta.url));

afterEach(async () => {
  await tracker.expectNoSurvivors();
  await expectNoOpenSockets();
});

test('notifications dropped by the server gate are filled by reads, byte-exact', async () => {
  const { logger, records } = captureLogger();
  const total = 24 * 1024 * 1024;
  // A small gate so that it trips; retention large enough that the fill reads find everything.
  await using server = await startTrackedServer(
    { maxQueuedNotificationBytes: 256 * 1024, logger },
    { retainedOutputMaxBytes: 2 * total, exitedRetentionMs: 60_000 },
  );
  await using proxy = await FaultProxy.start({ target: server.url });
  await using backend = new RemoteBackend(
    await ExecServerClient.connect({ url: proxy.url, gapFillDelayMs: 10 }),
  );
  proxy.pause('toClient');
  const proc = await startWhenPaused(backend, proxy, total);
  const collected = collectEvents(proc);
  await waitFor(() => records.some((r) => r.message.startsWith('client too slow')), {
    what: 'the server to start dropping notifications',
  });
  proxy.resume('toClient');
  const events = await collected;
  expect(events.some((e) => e.type === 'failed')).toBe(false);
  const seqs = events.flatMap((e) => (e.type === 'failed' ? [] : [e.seq]));
  expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  const stdout = Buffer.concat(
    events.flatMap((e) => (e.type === 'output' && e.stream === 'stdout' ? [e.chunk] : [])),
  );
  const stderr = fromUtf8(
    Buffer.concat(events.flatMap((e) => (e.type === 'output' && e.stream === 'stderr' ? [e.chunk] : []))),
  );
  expect(stdout.length).toBe(total);
  expect(`sha256:${createHash('sha256').update(stdout).digest('hex')}`).toBe(stderr.trim());
});

/** Starts the emitter; the start answer must pass the paused direction, so it is let through once. */
async function startWhenPaused(backend: RemoteBackend, proxy: FaultProxy, total: number) {
  proxy.resume('toClient');
  const proc = await backend.start(
    execParams('flood', [process.execPath, EMIT_RANDOM, String(total), '65536', '0']),
  );
  proxy.pause('toClient');
  return proc;
}
