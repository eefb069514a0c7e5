// The resume liveness check: a resume refused with -32010 makes the server ping the connection
// that holds the session. A holder that does not answer (a peer gone without a FIN) is dropped,
// so the next resume succeeds; a live one keeps its session (`active_session_resume_is_rejected`).
import { RpcError } from '@execd/protocol';
import { captureLogger, type LogRecord, waitFor } from '@execd/test-kit';
import { afterEach, describe, expect, test } from 'vitest';
import { type SessionAttachment, SessionRegistry } from '../../src/server/index.ts';
import { FakeProcessTable } from '../helpers/fake-process-table.ts';
import { RawWsClient } from '../helpers/raw-ws-client.ts';
import { startTestServer } from '../helpers/test-server.ts';

const clients: RawWsClient[] = [];

afterEach(async () => {
  for (const client of clients) client.resume();
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

async function connect(url: string): Promise<RawWsClient> {
  const client = await RawWsClient.connect(url);
  clients.push(client);
  return client;
}

const logged = (records: readonly LogRecord[], prefix: string): number =>
  records.filter((record) => record.message.startsWith(prefix)).length;

const DROPPED = 'peer did not answer a liveness ping';
const KEPT = 'connection passed the liveness check';

describe('resume liveness check', () => {
  test('a silent holder is dropped after a refused resume; the next resume succeeds', async () => {
    const { logger, records } = captureLogger();
    // Keepalive off: only the liveness check can notice the dead holder.
    await using server = await startTestServer({
      fake: true,
      keepaliveIntervalMs: 0,
      resumeLivenessTimeoutMs: 200,
      logger,
    });
    const stale = await connect(server.url);
    const { sessionId } = await stale.initialize();
    stale.pause(); // gone without a FIN: it reads nothing, so it answers no ping
    const fresh = await connect(server.url);
    const refused = fresh.request('initialize', { clientName: 't', resumeSessionId: sessionId });
    expect(await fresh.errorOf(refused)).toEqual({
      code: -32010,
      message: `session ${sessionId} is already attached to another connection`,
    });
    await waitFor(() => logged(records, DROPPED) === 1, { what: 'the silent holder to be dropped' });
    // The drop detaches the session; a failed initialize may be retried on the same connection.
    const resumed = await waitFor(
      async () => {
        const reply = await fresh.response(
          fresh.request('initialize', { clientName: 't', resumeSessionId: sessionId }),
        );
        return 'result' in reply ? reply.result : undefined;
      },
      { what: 'the session to be resumable' },
    );
    expect(resumed).toMatchObject({ sessionId });
    fresh.notify('initialized');
    expect(await fresh.call('environment/status', {})).toEqual({ status: 'ready' });
  });

  test('active_session_resume_is_rejected: a live holder answers the check and keeps its session', async () => {
    const { logger, records } = captureLogger();
    await using server = await startTestServer({
      fake: true,
      keepaliveIntervalMs: 0,
      resumeLivenessTimeoutMs: 100,
      logger,
    });
    const holder = await connect(server.url);
    const { sessionId } = await holder.initialize();
    const other = await connect(server.url);
    for (const attempt of [1, 2]) {
      const id = other.request('initialize', { clientName: 't', resumeSessionId: sessionId });
      expect(await other.errorOf(id)).toEqual({
        code: -32010,
        message: `session ${sessionId} is already attached to another connection`,
      });
      await waitFor(() => logged(records, KEPT) === attempt, { what: `liveness check ${attempt}` });
    }
    expect(holder.pings).toBe(2);
    expect(logged(records, DROPPED)).toBe(0);
    expect(await holder.call('environment/status', {})).toEqual({ status: 'ready' });
  });
});

describe('SessionRegistry', () => {
  const attachment = (probes: number[] = []): SessionAttachment => ({
    notify: () => {},
    evict: () => {},
    probeLiveness: (timeoutMs) => probes.push(timeoutMs),
  });
  const isAttachedError = (error: unknown): boolean =>
    RpcError.is(error) && error.code === 'sessionAlreadyAttached';

  test('a refused resume asks the holder to prove it is alive, with the configured timeout', async () => {
    const probes: number[] = [];
    await using registry = new SessionRegistry({
      createProcessTable: () => new FakeProcessTable(),
      resumeLivenessTimeoutMs: 1234,
    });
    const held = await registry.attach(undefined, attachment(probes));
    await expect(registry.attach(held.sessionId, attachment())).rejects.toSatisfy(isAttachedError);
    await expect(registry.attach(held.sessionId, attachment())).rejects.toSatisfy(isAttachedError);
    expect(probes).toEqual([1234, 1234]);
    // Once the holder went away, the resume succeeds and nobody is probed.
    held.detach();
    expect((await registry.attach(held.sessionId, attachment(probes))).sessionId).toBe(held.sessionId);
    expect(probes).toEqual([1234, 1234]);
  });

  test('a timeout of 0 turns the check off', async () => {
    const probes: number[] = [];
    await using registry = new SessionRegistry({
      createProcessTable: () => new FakeProcessTable(),
      resumeLivenessTimeoutMs: 0,
    });
    const held = await registry.attach(undefined, attachment(probes));
    await expect(registry.attach(held.sessionId, attachment())).rejects.toSatisfy(isAttachedError);
    expect(probes).toEqual([]);
  });
});
