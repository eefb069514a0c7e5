// The decider over a real WebSocket (spec §2.4): `network/policyRequest` from the server to the
// attached client, its answers (allow, deny, error, late, none), cancellation by terminate, and a
// detached session. Real bubblewrap, proxy and bridge; the raw test client answers by hand.
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileUri } from '@execd/protocol';
import { ProcessTracker, waitFor } from '@execd/test-kit';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { RawWsClient } from '../helpers/raw-ws-client.ts';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';
import { type Origin, startOrigin, TEST_RESOLVER } from './helpers.ts';

const tracker = new ProcessTracker();
let origin: Origin;
let workspace: string;

beforeEach(async () => {
  origin = await startOrigin();
  workspace = realpathSync(mkdtempSync(join(tmpdir(), 'execd-policy-')));
});

afterEach(async () => {
  await origin.close();
  rmSync(workspace, { recursive: true, force: true });
});

function startServer(): Promise<TestServer> {
  return startTestServer({ processTable: { networkResolver: TEST_RESOLVER } });
}

function startParams(processId: string, script: string, networkProxy: Record<string, unknown>) {
  return {
    processId,
    argv: ['/bin/bash', '-c', script],
    cwd: pathToFileUri(workspace),
    env: { PATH: '/usr/local/bin:/usr/bin:/bin' },
    tty: false,
    pipeStdin: false,
    sandbox: { profile: 'workspace-write', network: 'proxied' },
    networkProxy: { allowedDomains: ['allowed.test'], ...networkProxy },
    managedNetwork: { loopbackPorts: [origin.port] },
  };
}

async function start(client: RawWsClient, params: ReturnType<typeof startParams>): Promise<void> {
  expect(await client.call('process/start', params)).toEqual({
    processId: params.processId,
    sandboxType: 'linuxSeccomp',
  });
  const list = await client.call<{ processes: { pid?: number }[] }>('process/list', {});
  for (const entry of list.processes) if (entry.pid !== undefined) tracker.add(entry.pid);
}

/** Waits for the `index`-th `network/policyRequest` the server sent to `client`. */
function policyRequest(
  client: RawWsClient,
  index = 0,
): Promise<{ id: string; params: Record<string, unknown> }> {
  return waitFor(
    () => {
      const found = client.frames
        .map((frame) => frame.message)
        .filter((message) => message.method === 'network/policyRequest' && 'id' in message);
      const request = found[index];
      return request && { id: request.id as string, params: request.params as Record<string, unknown> };
    },
    { what: 'a network/policyRequest' },
  );
}

async function readUntilClosed(client: RawWsClient, processId: string) {
  let afterSeq = 0;
  let text = '';
  for (;;) {
    const read = await client.call<{
      chunks: { chunk: string | Uint8Array }[];
      nextSeq: number;
      closed: boolean;
      exitCode: number | null;
      sandboxDenied: boolean;
    }>('process/read', { processId, afterSeq, waitMs: 2_000 });
    for (const { chunk } of read.chunks)
      text += Buffer.from(typeof chunk === 'string' ? Buffer.from(chunk, 'base64') : chunk);
    afterSeq = read.nextSeq - 1;
    if (read.closed) return { text, read };
  }
}

const decisionsOf = (client: RawWsClient) =>
  client.notifications('network/policyDecision').map((n) => n.params as Record<string, unknown>);

describe('network/policyRequest over WebSocket', () => {
  test.each(['json', 'msgpack'] as const)(
    'allow (%s): answered while an inline long-poll is in flight',
    async (codec) => {
      await using server = await startServer();
      await using client = await RawWsClient.connect(server.url, { codec });
      await client.initialize();
      const url = `http://ask.test:${origin.port}/ok`;
      await start(client, startParams('p1', `curl -sS --max-time 30 ${url}`, { policyCallbacks: true }));
      // Requests run inline by default: this read blocks every later request, not the answer.
      const pendingRead = client.request('process/read', { processId: 'p1', afterSeq: 0, waitMs: 20_000 });
      const question = await policyRequest(client);
      expect(question.id).toBe('np-1');
      expect(question.params).toEqual({
        processId: 'p1',
        request: { protocol: 'http', host: 'ask.test', port: origin.port },
      });
      client.send({ id: question.id, result: { decision: { type: 'allow' } } });
      await client.response(pendingRead);
      const { text, read } = await readUntilClosed(client, 'p1');
      expect(text).toBe(`hello ask.test:${origin.port}/ok`);
      expect(read).toMatchObject({ exitCode: 0, sandboxDenied: false });
      expect(decisionsOf(client)).toEqual([
        expect.objectContaining({
          processId: 'p1',
          request: { protocol: 'http', host: 'ask.test', port: origin.port },
          decision: 'allow',
          rule: 'decider',
        }),
      ]);
    },
  );

  test('deny, and an error reply, refuse the connection; the connection stays open', async () => {
    await using server = await startServer();
    await using client = await RawWsClient.connect(server.url);
    await client.initialize();
    const script = [
      `curl -sSf --max-time 30 http://ask.test:${origin.port}/a 2>&1; echo a=$?`,
      `curl -sSf --max-time 30 http://unknown.test:${origin.port}/b 2>&1; echo b=$?`,
      'exit 3',
    ].join('\n');
    await start(client, startParams('p2', script, { policyDecisionTimeoutMs: 20_000 }));
    const first = await policyRequest(client, 0);
    client.send({ id: first.id, result: { decision: { type: 'deny', reason: 'not today' } } });
    const second = await policyRequest(client, 1);
    // What a client that implements no server requests answers (the execd client today).
    client.send({ id: second.id, error: { code: -32601, message: 'not implemented' } });
    const { text, read } = await readUntilClosed(client, 'p2');
    expect(text).toContain('a=22');
    expect(text).toContain('b=22');
    expect(read).toMatchObject({ exitCode: 3, sandboxDenied: true });
    expect(
      decisionsOf(client).map((d) => [(d.request as { host: string }).host, d.decision, d.reason]),
    ).toEqual([
      ['ask.test', 'deny', 'deciderDenied'],
      ['unknown.test', 'deny', 'deciderFailed'],
    ]);
    expect(await client.call('environment/status', {})).toEqual({ status: 'ready' });
  });

  test('no answer in time denies; a late answer is accepted quietly; an unknown id closes', async () => {
    await using server = await startServer();
    await using client = await RawWsClient.connect(server.url);
    await client.initialize();
    const url = `http://ask.test:${origin.port}/slow`;
    await start(client, startParams('p3', `curl -sS --max-time 30 ${url}`, { policyDecisionTimeoutMs: 300 }));
    const question = await policyRequest(client);
    const { text } = await readUntilClosed(client, 'p3');
    expect(text).toContain('reason: deciderTimeout');
    expect(decisionsOf(client)).toEqual([
      expect.objectContaining({ decision: 'deny', reason: 'deciderTimeout' }),
    ]);
    client.send({ id: question.id, result: { decision: { type: 'allow' } } });
    expect(await client.call('environment/status', {})).toEqual({ status: 'ready' });
    client.send({ id: 'np-999', result: { decision: { type: 'allow' } } });
    expect((await client.closed).code).toBe(1002);
  });

  test('process/terminate cancels a pending question', async () => {
    await using server = await startServer();
    await using client = await RawWsClient.connect(server.url);
    await client.initialize();
    const url = `http://ask.test:${origin.port}/never`;
    await start(
      client,
      startParams('p4', `curl -sS --max-time 30 ${url}; sleep 30`, { policyCallbacks: true }),
    );
    const question = await policyRequest(client);
    expect(await client.call('process/terminate', { processId: 'p4' })).toEqual({ running: true });
    const { read } = await readUntilClosed(client, 'p4');
    expect(read.exitCode).toBe(137);
    await waitFor(() => decisionsOf(client).length === 1);
    expect(decisionsOf(client)).toEqual([
      expect.objectContaining({ decision: 'deny', reason: 'deciderFailed' }),
    ]);
    client.send({ id: question.id, result: { decision: { type: 'allow' } } });
    expect(await client.call('environment/status', {})).toEqual({ status: 'ready' });
  });

  test('a detached session has nobody to ask: denied; a connection lost while asking: denied', async () => {
    await using server = await startServer();
    const first = await RawWsClient.connect(server.url);
    const { sessionId } = await first.initialize();
    const go = join(workspace, 'go');
    const script = [
      `curl -sS --max-time 30 http://ask.test:${origin.port}/lost > lost.txt 2>&1`,
      `while [ ! -e ${go} ]; do sleep 0.05; done`,
      `curl -sS --max-time 30 http://unknown.test:${origin.port}/detached > detached.txt 2>&1`,
      'touch done',
    ].join('\n');
    await start(first, startParams('p5', script, { policyCallbacks: true }));
    await policyRequest(first);
    await first.drop();
    writeFileSync(go, '');
    await waitFor(() => existsSync(join(workspace, 'done')), { what: 'the command to finish' });
    expect(readFileSync(join(workspace, 'lost.txt'), 'utf8')).toContain('reason: deciderFailed');
    expect(readFileSync(join(workspace, 'detached.txt'), 'utf8')).toContain('reason: deciderFailed');
    await using second = await RawWsClient.connect(server.url);
    await second.initialize(sessionId);
    const { read } = await readUntilClosed(second, 'p5');
    expect(read.exitCode).toBe(0);
    expect(second.frames.some((frame) => frame.message.method === 'network/policyRequest')).toBe(false);
  });
});
