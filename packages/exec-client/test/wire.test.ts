// What the client puts on the wire and how it reacts, against a scripted WebSocket server (the
// original's rpc.rs and client.rs unit cases, spec §2.2, §2.3, §3.5).
import {
  type CodecName,
  createJsonCodec,
  createMsgpackCodec,
  ExecError,
  fromUtf8,
  notificationMessage,
  RpcError,
} from '@execd/protocol';
import type { ExecProcessEvent } from '@execd/protocol/contract';
import { collectEvents, execParams, waitFor } from '@execd/test-kit';
import { describe, expect, test } from 'vitest';
import { UpgradeRefusedError } from '../src/errors.ts';
import { ExecServerClient } from '../src/exec-server-client.ts';
import { MAX_IN_FLIGHT_CALLS } from '../src/limits.ts';
import { startTrackedServer } from './helpers/harness.ts';
import { answerInitialize, type Peer, ScriptedServer } from './helpers/scripted-server.ts';

const b64 = (text: string): string => Buffer.from(text).toString('base64');

function readAnswer(nextSeq: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { chunks: [], nextSeq, exited: false, exitCode: null, closed: false, failure: null, ...extra };
}

/** A script answering initialize and process/start, and handing everything else to `rest`. */
function basic(rest: (peer: Peer, message: Record<string, unknown>) => void = () => {}) {
  return (peer: Peer, message: Record<string, unknown>): void => {
    if (answerInitialize(peer, message)) return;
    if (message.method === 'process/start') {
      const params = message.params as { processId: string };
      peer.respond(message.id, { processId: params.processId, sandboxType: 'none' });
      return;
    }
    rest(peer, message);
  };
}

function summary(events: readonly ExecProcessEvent[]): unknown[] {
  return events.map((e) =>
    e.type === 'output' ? `${e.seq}:${fromUtf8(e.chunk)}` : e.type === 'failed' ? e : `${e.seq}:${e.type}`,
  );
}

const fast = { recoveryTimeoutMs: 5_000, recoveryInitialDelayMs: 10, recoveryMaxDelayMs: 50 } as const;

describe('handshake and request ids', () => {
  test.each(['json', 'msgpack'] as CodecName[])(
    'initialize, initialized, integer ids from 1 (%s)',
    async (codec) => {
      await using server = await ScriptedServer.start(
        basic((peer, m) => m.method === 'environment/status' && peer.respond(m.id, { status: 'ready' })),
      );
      await using client = await ExecServerClient.connect({
        url: server.url,
        codec,
        clientName: 'wire-test',
      });
      expect(await client.environmentStatus()).toEqual({ status: 'ready' });
      const peer = server.peers[0]!;
      expect(peer.received).toEqual([
        {
          id: 1,
          method: 'initialize',
          // execd's opt-ins (an original server ignores them), on both codecs.
          params: { clientName: 'wire-test', waitingForInput: true, outputBatches: true },
        },
        { method: 'initialized', params: {} },
        { id: 2, method: 'environment/status', params: {} },
      ]);
      expect(peer.binary).toEqual(codec === 'msgpack' ? [true, true, true] : [false, false, false]);
      expect(client.sessionId).toBe('s-1');
    },
  );

  test('rpc_client_matches_out_of_order_responses_by_request_id', async () => {
    const held: Record<string, unknown>[] = [];
    await using server = await ScriptedServer.start(
      basic((peer, m) => {
        held.push(m);
        if (held.length < 2) return;
        for (const request of held.reverse()) {
          if (request.method === 'environment/status') peer.respond(request.id, { status: 'ready' });
          else peer.respond(request.id, { shell: { name: 'sh', path: '/bin/sh' }, capabilities: {} });
        }
      }),
    );
    await using client = await ExecServerClient.connect({ url: server.url });
    const [info, status] = await Promise.all([client.environmentInfo(), client.environmentStatus()]);
    expect(info.shell).toEqual({ name: 'sh', path: '/bin/sh' });
    expect(status).toEqual({ status: 'ready' });
  });

  test('rpc_client_timeout_removes_pending_request', async () => {
    await using server = await ScriptedServer.start(basic());
    await using client = await ExecServerClient.connect({ url: server.url, environmentInfoTimeoutMs: 50 });
    const error = await client.environmentInfo().catch((thrown: unknown) => thrown);
    expect(ExecError.is(error) && error.code).toBe('aborted');
  });

  test('rpc_client_bounds_in_flight_calls_and_preserves_cleanup', async () => {
    await using server = await ScriptedServer.start(
      basic((peer, m) => {
        if (m.method === 'process/terminate') peer.respond(m.id, { running: true });
      }),
    );
    const client = await ExecServerClient.connect({ url: server.url });
    const proc = await client.start(execParams('p', ['sleep', '1']));
    const reads = Array.from({ length: MAX_IN_FLIGHT_CALLS }, () =>
      proc.read({ waitMs: 60_000 }).catch((error: unknown) => error),
    );
    const peer = server.peers[0]!;
    await waitFor(() => peer.received.filter((m) => m.method === 'process/read').length === reads.length, {
      what: 'every read on the wire',
    });
    const over = await proc.read({ waitMs: 60_000 }).catch((error: unknown) => error);
    expect(ExecError.is(over) && over.code).toBe('internal');
    expect(await proc.terminate()).toEqual({ running: true });
    await client.close();
    for (const result of await Promise.all(reads))
      expect(ExecError.is(result) && result.code).toBe('transportClosed');
  });

  test('a server-to-client request is answered -32601 (unknown method, or nobody decides)', async () => {
    await using server = await ScriptedServer.start(basic());
    await using _client = await ExecServerClient.connect({ url: server.url });
    const peer = server.peers[0]!;
    const question = { processId: 'p', request: { protocol: 'http', host: 'a.test', port: 80 } };
    peer.send({ kind: 'request', id: 77, method: 'network/policyRequest', params: question });
    peer.send({ kind: 'request', id: 'x-1', method: 'fs/readFile', params: {} });
    expect(await peer.next((m) => m.id === 77, 'the reply')).toMatchObject({
      id: 77,
      error: { code: -32601 },
    });
    expect(await peer.next((m) => m.id === 'x-1', 'the reply')).toMatchObject({ error: { code: -32601 } });
  });
});

describe('pushed events', () => {
  test('notifications before the start answer, reordered, and duplicated are published once in order', async () => {
    await using server = await ScriptedServer.start((peer, m) => {
      if (answerInitialize(peer, m)) return;
      if (m.method === 'process/start') {
        peer.notify('process/closed', { processId: 'p', seq: 4 });
        peer.notify('process/output', { processId: 'p', seq: 2, stream: 'stderr', chunk: b64('b') });
        peer.notify('process/output', { processId: 'p', seq: 1, stream: 'stdout', chunk: b64('a') });
        peer.notify('process/output', { processId: 'p', seq: 1, stream: 'stdout', chunk: b64('a') });
        peer.notify('process/output', { processId: 'other', seq: 1, stream: 'stdout', chunk: b64('x') });
        peer.respond(m.id, { processId: 'p', sandboxType: 'none' });
        peer.notify('process/exited', { processId: 'p', seq: 3, exitCode: 7, sandboxDenied: false });
      }
    });
    await using client = await ExecServerClient.connect({ url: server.url, codec: 'json' });
    const proc = await client.start(execParams('p', ['x']));
    expect(summary(await collectEvents(proc))).toEqual(['1:a', '2:b', '3:exited', '4:closed']);
  });

  test.each(['json', 'msgpack'] as CodecName[])(
    'process/outputBatch (%s; msgpack in fragments, cut inside a chunk too) is published chunk by chunk',
    async (codec) => {
      const chunks = [1, 2, 3].map((seq) => ({ seq, stream: 'stdout', chunk: Buffer.from(`chunk ${seq}`) }));
      const message = notificationMessage('process/outputBatch', { processId: 'p', chunks });
      await using server = await ScriptedServer.start(
        basic((peer, m) => {
          if (m.method !== 'initialized') return;
          if (codec === 'json') {
            peer.socket.send(createJsonCodec().encodeText(message));
          } else {
            // As execd sends it (headers and chunks as fragments), then cut once more inside chunk 2.
            const parts = createMsgpackCodec().encodeParts(message)!;
            const split = [
              ...parts.slice(0, 3),
              parts[3]!.subarray(0, 3),
              parts[3]!.subarray(3),
              ...parts.slice(4),
            ];
            for (const [i, part] of split.entries()) {
              peer.socket.send(part, { binary: true, fin: i === split.length - 1 });
            }
          }
          peer.notify('process/exited', { processId: 'p', seq: 4, exitCode: 0 });
          peer.notify('process/closed', { processId: 'p', seq: 5 });
        }),
      );
      await using client = await ExecServerClient.connect({ url: server.url, codec });
      const proc = await client.start(execParams('p', ['x']));
      expect(summary(await collectEvents(proc))).toEqual([
        '1:chunk 1',
        '2:chunk 2',
        '3:chunk 3',
        '4:exited',
        '5:closed',
      ]);
    },
  );

  test('a hole left by a dropped notification is filled with process/read', async () => {
    await using server = await ScriptedServer.start(
      basic((peer, m) => {
        if (m.method !== 'process/read') return;
        const chunks = [2, 3].map((seq) => ({ seq, stream: 'stdout', chunk: b64(`c${seq}`) }));
        peer.respond(m.id, readAnswer(4, { chunks }));
      }),
    );
    await using client = await ExecServerClient.connect({ url: server.url, gapFillDelayMs: 10 });
    const proc = await client.start(execParams('p', ['x']));
    const peer = server.peers[0]!;
    peer.notify('process/output', { processId: 'p', seq: 1, stream: 'stdout', chunk: b64('c1') });
    peer.notify('process/output', { processId: 'p', seq: 3, stream: 'stdout', chunk: b64('c3') });
    const fill = await peer.request('process/read');
    expect(fill.params).toEqual({ processId: 'p', afterSeq: 1, waitMs: 0 });
    const events: ExecProcessEvent[] = [];
    for await (const event of proc.events({ cancelSignal: AbortSignal.timeout(10_000) })) {
      events.push(event);
      if (events.length === 3) break;
    }
    expect(summary(events)).toEqual(['1:c1', '2:c2', '3:c3']);
  });
});

describe('recovery on the wire', () => {
  test('session_write_retries_same_write_id_after_recovery', async () => {
    let dropped = false;
    await using server = await ScriptedServer.start(
      basic((peer, m) => {
        if (m.method === 'process/read') peer.respond(m.id, readAnswer(1));
        if (m.method !== 'process/write') return;
        if (!dropped) {
          dropped = true;
          peer.drop();
          return;
        }
        peer.respond(m.id, { status: 'accepted' });
      }),
    );
    await using client = await ExecServerClient.connect({ url: server.url, codec: 'json', ...fast });
    const proc = await client.start(execParams('p', ['cat'], { pipeStdin: true }));
    expect(await proc.write(Buffer.from('once\n'))).toEqual({ status: 'accepted' });
    expect(await proc.write(Buffer.from('twice\n'))).toEqual({ status: 'accepted' });
    const [first, second] = server.peers;
    expect(first!.received.filter((m) => m.method === 'process/write').map((m) => m.params)).toEqual([
      { processId: 'p', chunk: b64('once\n'), writeId: '1' },
    ]);
    expect(second!.received.map((m) => [m.method, m.params])).toEqual([
      [
        'initialize',
        { clientName: 'execd-client', resumeSessionId: 's-1', waitingForInput: true, outputBatches: true },
      ],
      ['initialized', {}],
      ['process/read', { processId: 'p', afterSeq: 0, waitMs: 0 }],
      ['process/write', { processId: 'p', chunk: b64('once\n'), writeId: '1' }],
      ['process/write', { processId: 'p', chunk: b64('twice\n'), writeId: '2' }],
    ]);
  });

  test('a resume answered with another session id fails the client', async () => {
    await using server = await ScriptedServer.start((peer, m) => {
      if (m.method === 'initialize') peer.respond(m.id, { sessionId: peer.index === 0 ? 's-1' : 's-2' });
    });
    await using client = await ExecServerClient.connect({ url: server.url, ...fast });
    server.peers[0]!.drop();
    await waitFor(() => client.state === 'failed', { what: 'failure' });
    expect(client.failure).toMatch(
      /^exec-server transport disconnected: .+; failed to resume exec-server session: exec-server initialized an unexpected session s-2$/,
    );
    const explicit = await ExecServerClient.connect({ url: server.url, resumeSessionId: 's-9' }).catch(
      (e: unknown) => e,
    );
    expect(ExecError.is(explicit) && [explicit.code, explicit.message]).toEqual([
      'protocol',
      'exec-server initialized an unexpected session s-2',
    ]);
  });

  test('transport_disconnect_fails_sessions_and_rejects_new_sessions', async () => {
    await using server = await ScriptedServer.start((peer, m) => {
      if (m.method === 'initialize' && peer.index > 0) {
        peer.error(m.id, -32600, 'unknown session id s-1');
        return;
      }
      basic()(peer, m);
    });
    await using client = await ExecServerClient.connect({ url: server.url, ...fast });
    const proc = await client.start(execParams('p', ['x']));
    const events = collectEvents(proc);
    server.peers[0]!.drop();
    const failed = (await events).at(-1);
    expect(failed).toEqual({
      type: 'failed',
      message: expect.stringMatching(/; failed to resume exec-server session: unknown session id s-1$/),
    });
    expect(server.peers).toHaveLength(2); // -32600 is final: no further attempts
    const start = await client.start(execParams('q', ['x'])).catch((e: unknown) => e);
    expect(ExecError.is(start) && start.code).toBe('transportClosed');
    expect(RpcError.is(start)).toBe(false);
  });
});

describe('auth and cancellation', () => {
  test('a bearer token is sent on the upgrade; a refused one is not retried', async () => {
    await using server = await startTrackedServer({ authToken: 'sesame' });
    const refused = await ExecServerClient.connect({ url: server.url }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(UpgradeRefusedError);
    expect([(refused as UpgradeRefusedError).code, (refused as UpgradeRefusedError).status]).toEqual([
      'transportClosed',
      401,
    ]);
    await using client = await ExecServerClient.connect({ url: server.url, token: 'sesame' });
    expect(await client.environmentStatus()).toEqual({ status: 'ready' });
  });

  test('a read cancelled while the client is recovering rejects at once (aborted)', async () => {
    await using server = await ScriptedServer.start(
      basic((peer, m) => {
        // Every resume attempt is left unanswered: recovery stays under way.
        if (m.method === 'initialize' && peer.index > 0) return;
      }),
    );
    await using client = await ExecServerClient.connect({
      url: server.url,
      ...fast,
      initializeTimeoutMs: 60_000,
    });
    const proc = await client.start(execParams('p', ['x']));
    server.peers[0]!.drop();
    await waitFor(() => client.state === 'recovering', { what: 'recovering' });
    const cancel = new AbortController();
    const read = proc.read({ cancelSignal: cancel.signal }).catch((e: unknown) => e);
    cancel.abort();
    const error = await read;
    expect(ExecError.is(error) && error.code).toBe('aborted');
  });
});
