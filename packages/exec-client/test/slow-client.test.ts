// A client too slow for its notifications: execd's server then holds the child's output back
// (back-pressure) instead of dropping it; the client still gets every byte exactly once, in order
// (and would fill any hole with process/read).
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { fromUtf8 } from '@execd/protocol';
import { captureLogger, collectEvents, execParams, FaultProxy, waitFor } from '@execd/test-kit';
import { expect, test } from 'vitest';
import { ExecServerClient } from '../src/exec-server-client.ts';
import { RemoteBackend } from '../src/remote-backend.ts';
import { startTrackedServer } from './helpers/harness.ts';

const EMIT_RANDOM = fileURLToPath(new URL('./fixtures/emit-random.mjs', import.meta.url));

test('a client too slow for its notifications gets every byte, in order', async () => {
  const { logger, records } = captureLogger();
  const total = 24 * 1024 * 1024;
  // A small backlog cap so that the server holds the output back early; default retention (1 MiB).
  await using server = await startTrackedServer(
    { maxQueuedNotificationBytes: 256 * 1024, logger },
    { exitedRetentionMs: 60_000 },
  );
  await using proxy = await FaultProxy.start({ target: server.url });
  await using backend = new RemoteBackend(
    await ExecServerClient.connect({ url: proxy.url, gapFillDelayMs: 10 }),
  );
  proxy.pause('toClient');
  const proc = await startWhenPaused(backend, proxy, total);
  const collected = collectEvents(proc);
  await waitFor(() => records.some((r) => r.message.includes("holding its processes' output back")), {
    what: 'the server to hold the output back',
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
