// Resume against a half-open connection (spec §2.3): the client's connection is cut without the
// server hearing of it, so the server still holds the session when the client comes back. The
// first resume attempts are refused (-32010, as the original), the server pings the holding
// connection, drops it when no pong comes, and a later attempt resumes the session, well inside
// the client's recovery deadline. A live holder answers the ping and keeps its session.
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RESUME_LIVENESS_TIMEOUT_MS } from '@execd/exec-server/server';
import { RpcError } from '@execd/protocol';
import { captureLogger, execParams, FaultProxy, type LogRecord, readUntil, waitFor } from '@execd/test-kit';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ExecServerClient } from '../src/exec-server-client.ts';
import { RemoteBackend } from '../src/remote-backend.ts';
import { startTrackedServer } from './helpers/harness.ts';
import { StrandingHop } from './helpers/stranding-hop.ts';

let scratch = '';
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'execd-half-open-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

const DROPPED = 'peer did not answer a liveness ping';
const KEPT = 'connection passed the liveness check';
const count = (records: readonly LogRecord[], prefix: string): number =>
  records.filter((record) => record.message.startsWith(prefix)).length;

/** Recovery settings for the test: the deadline is 5 liveness timeouts. */
const RECOVERY = {
  recoveryTimeoutMs: 5 * RESUME_LIVENESS_TIMEOUT_MS,
  recoveryInitialDelayMs: 50,
  recoveryMaxDelayMs: 500,
} as const;

describe.each(['drop', 'pause'] as const)('a connection cut without a FIN (%s)', (fault) => {
  test('the server drops the silent holder after a refused resume; the client recovers', async () => {
    const serverLog = captureLogger();
    const clientLog = captureLogger();
    // Server keepalive off: only the resume liveness check can find the dead connection.
    await using server = await startTrackedServer({ keepaliveIntervalMs: 0, logger: serverLog.logger });
    // client -> FaultProxy -> hop -> server: the proxy cuts the client's side, the hop keeps the
    // server's side open and silent.
    await using hop = await StrandingHop.start(server.url);
    await using proxy = await FaultProxy.start({ target: hop.url });
    await using backend = new RemoteBackend(
      await ExecServerClient.connect({
        url: proxy.url,
        ...RECOVERY,
        // With `pause`, the client notices the silence through its own keepalive.
        keepaliveIntervalMs: fault === 'pause' ? 100 : 0,
        logger: clientLog.logger,
      }),
    );
    const client = backend.client;
    const go = join(scratch, `go-${fault}`);
    const script = 'printf "before\\n"; while [ ! -e "$1" ]; do sleep 0.02; done; printf "during\\n"; read x';
    const proc = await backend.start(
      execParams(`p-${fault}`, ['sh', '-c', script, 'sh', go], { pipeStdin: true }),
    );
    const before = await readUntil(proc, { until: (o) => o.text === 'before\n' });

    expect(hop.strand()).toBe(1);
    if (fault === 'drop') proxy.drop();
    else proxy.pause('both');
    await waitFor(() => client.state === 'recovering', { what: 'the client to notice' });
    await writeFile(go, '');
    if (fault === 'pause') proxy.resume('both');

    await waitFor(() => client.state !== 'recovering', { timeoutMs: 30_000, what: 'the recovery to end' });
    expect([client.state, client.failure]).toEqual(['ready', undefined]);
    const refused = clientLog.records.filter(
      (record) =>
        record.message === 'session resume attempt failed' &&
        RpcError.is(record.fields?.error) &&
        record.fields.error.code === 'sessionAlreadyAttached',
    );
    expect(refused.length).toBeGreaterThan(0);
    expect(count(serverLog.records, DROPPED)).toBe(1);

    // Output written while the client was away arrives exactly once; stdin still works.
    const during = await readUntil(proc, { afterSeq: before.afterSeq, until: (o) => o.text === 'during\n' });
    expect(during.text).toBe('during\n');
    expect(existsSync(go)).toBe(true);
    expect(await proc.write(Buffer.from('bye\n'))).toEqual({ status: 'accepted' });
    expect((await readUntil(proc, { afterSeq: during.afterSeq })).last).toMatchObject({ exitCode: 0 });
  });
});

test('active_session_resume_is_rejected: a live client holding the session answers the check and keeps it', async () => {
  const serverLog = captureLogger();
  await using server = await startTrackedServer({
    keepaliveIntervalMs: 0,
    resumeLivenessTimeoutMs: 500,
    logger: serverLog.logger,
  });
  await using holder = await ExecServerClient.connect({ url: server.url, keepaliveIntervalMs: 0 });
  for (const attempt of [1, 2]) {
    const refused = await ExecServerClient.connect({
      url: server.url,
      resumeSessionId: holder.sessionId,
    }).catch((error: unknown) => error);
    expect(RpcError.is(refused) && [refused.code, refused.rpcCode]).toEqual([
      'sessionAlreadyAttached',
      -32010,
    ]);
    await waitFor(() => count(serverLog.records, KEPT) === attempt, { what: `liveness check ${attempt}` });
  }
  expect(count(serverLog.records, DROPPED)).toBe(0);
  expect(holder.state).toBe('ready');
  expect(await holder.environmentStatus()).toEqual({ status: 'ready' });
});
