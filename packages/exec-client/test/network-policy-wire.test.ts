// The client's side of the managed network on the wire, against a scripted server (spec §2.4):
// answers to `network/policyRequest` (shapes, reasons, errors, both codecs), routing to the
// decider of the process, cancellation when the process closes or the connection drops, and
// `network/policyDecision` into `RemoteProcess.networkDenials()` and the client's listener.
import type {
  CodecName,
  NetworkPolicyDecisionNotification,
  NetworkPolicyRequestParams,
} from '@execd/protocol';
import type { NetworkPolicyDecider } from '@execd/protocol/contract';
import { captureLogger, execParams, waitFor } from '@execd/test-kit';
import { describe, expect, test } from 'vitest';
import { ExecServerClient } from '../src/exec-server-client.ts';
import { DEFAULT_ASK_REASON, DEFAULT_DENY_REASON } from '../src/network-policy.ts';
import { answerInitialize, type Peer, ScriptedServer } from './helpers/scripted-server.ts';

/** Answers initialize, process/start and process/read (nothing new); ignores the rest. */
function script(peer: Peer, message: Record<string, unknown>): void {
  if (answerInitialize(peer, message)) return;
  const params = message.params as { processId: string; afterSeq?: number };
  if (message.method === 'process/start') peer.respond(message.id, { processId: params.processId });
  if (message.method === 'process/read') {
    const nextSeq = (params.afterSeq ?? 0) + 1;
    peer.respond(message.id, {
      chunks: [],
      nextSeq,
      exited: false,
      exitCode: null,
      closed: false,
      failure: null,
    });
  }
}

function question(
  processId: string,
  host = 'a.test',
  protocol = 'http',
  port = 80,
): NetworkPolicyRequestParams {
  return { processId, request: { protocol, host, port } };
}

/** Sends `network/policyRequest` with `id` and waits for the client's answer. */
function ask(peer: Peer, id: string, params: unknown): Promise<Record<string, unknown>> {
  peer.send({ kind: 'request', id, method: 'network/policyRequest', params });
  return peer.next((m) => m.id === id && !('method' in m), `the answer to ${id}`);
}

/** A decider that never answers on its own; its calls and their signals are kept. */
function blockingDecider(): {
  decider: NetworkPolicyDecider;
  calls: { request: unknown; signal: AbortSignal }[];
} {
  const calls: { request: unknown; signal: AbortSignal }[] = [];
  return {
    calls,
    decider: (request, { cancelSignal }) => {
      calls.push({ request, signal: cancelSignal });
      return new Promise(() => {});
    },
  };
}

describe('network/policyRequest answers', () => {
  test.each(['json', 'msgpack'] as CodecName[])(
    'allow, deny and ask, always with a reason on deny and ask, in the client codec (%s)',
    async (codec) => {
      await using server = await ScriptedServer.start(script);
      const asked: NetworkPolicyRequestParams[] = [];
      await using _client = await ExecServerClient.connect({
        url: server.url,
        codec,
        onNetworkPolicyRequest: (request) => {
          asked.push(request);
          const answers: Record<string, ReturnType<NetworkPolicyDecider>> = {
            'allow.test': 'allow',
            'deny.test': { type: 'deny' },
            'ask.test': Promise.resolve('ask'),
            'why.test': { type: 'deny', reason: 'not on weekends' },
            'ok.test': Promise.resolve({ type: 'allow' }),
          };
          return answers[request.request.host] ?? 'deny';
        },
      });
      const peer = server.peers[0]!;
      const hosts = ['allow.test', 'deny.test', 'ask.test', 'why.test', 'ok.test'];
      const answers = await Promise.all(
        hosts.map((host, index) => ask(peer, `np-${index + 1}`, question('p', host, 'https_connect', 443))),
      );
      expect(answers.map((answer) => answer.result)).toEqual([
        { decision: { type: 'allow' } },
        { decision: { type: 'deny', reason: DEFAULT_DENY_REASON } },
        { decision: { type: 'ask', reason: DEFAULT_ASK_REASON } },
        { decision: { type: 'deny', reason: 'not on weekends' } },
        { decision: { type: 'allow' } },
      ]);
      expect(asked[0]).toEqual(question('p', 'allow.test', 'https_connect', 443));
      // Replies go out in the client's codec, like its requests.
      const replies = peer.received.flatMap((m, i) => ('method' in m ? [] : [peer.binary[i]]));
      expect(replies).toEqual(hosts.map(() => codec === 'msgpack'));
    },
  );

  test('a throwing decider is -32603, invalid params -32602, an unreadable answer -32603', async () => {
    await using server = await ScriptedServer.start(script);
    await using _client = await ExecServerClient.connect({
      url: server.url,
      onNetworkPolicyRequest: (request) => {
        if (request.request.host === 'throws.test') throw new Error('decider is broken');
        return { type: 'maybe' } as never;
      },
    });
    const peer = server.peers[0]!;
    expect(await ask(peer, 'np-1', question('p', 'throws.test'))).toMatchObject({
      error: { code: -32603, message: 'network policy decider failed: decider is broken' },
    });
    expect(await ask(peer, 'np-2', { processId: 'p' })).toMatchObject({ error: { code: -32602 } });
    expect(await ask(peer, 'np-3', question('p', 'other.test'))).toMatchObject({ error: { code: -32603 } });
    // The connection is still fine.
    expect(await ask(peer, 'np-4', question('p', 'throws.test'))).toMatchObject({ error: { code: -32603 } });
  });
});

describe('routing and cancellation', () => {
  test('a per-start decider wins for its process; other processes go to the client decider', async () => {
    await using server = await ScriptedServer.start(script);
    await using client = await ExecServerClient.connect({
      url: server.url,
      onNetworkPolicyRequest: () => 'allow',
    });
    const own = await client.start(execParams('own', ['true']), {
      networkPolicyDecider: (request) => ({ type: 'deny', reason: `own decider for ${request.processId}` }),
    });
    await client.start(execParams('plain', ['true']));
    const peer = server.peers[0]!;
    expect((await ask(peer, 'np-1', question('own'))).result).toEqual({
      decision: { type: 'deny', reason: 'own decider for own' },
    });
    expect((await ask(peer, 'np-2', question('plain'))).result).toEqual({ decision: { type: 'allow' } });
    expect((await ask(peer, 'np-3', question('never-started'))).result).toEqual({
      decision: { type: 'allow' },
    });
    await own.close();
  });

  test('a pending decision is cancelled once its process closes', async () => {
    await using server = await ScriptedServer.start(script);
    await using client = await ExecServerClient.connect({ url: server.url });
    const blocking = blockingDecider();
    await client.start(execParams('p1', ['true']), { networkPolicyDecider: blocking.decider });
    const peer = server.peers[0]!;
    const answer = ask(peer, 'np-1', question('p1'));
    await waitFor(() => blocking.calls.length === 1, { what: 'the decider to be asked' });
    expect(blocking.calls[0]!.signal.aborted).toBe(false);
    peer.notify('process/exited', { processId: 'p1', seq: 1, exitCode: 0 });
    peer.notify('process/closed', { processId: 'p1', seq: 2 });
    expect(await answer).toMatchObject({ error: { code: -32603 } });
    expect(blocking.calls[0]!.signal.aborted).toBe(true);
  });

  test('a connection lost while deciding cancels the decision; after the resume the decider answers on the new connection', async () => {
    await using server = await ScriptedServer.start(script);
    let block = true;
    const signals: AbortSignal[] = [];
    await using client = await ExecServerClient.connect({
      url: server.url,
      recoveryTimeoutMs: 5_000,
      recoveryInitialDelayMs: 10,
      recoveryMaxDelayMs: 50,
      onNetworkPolicyRequest: (_request, { cancelSignal }) => {
        signals.push(cancelSignal);
        return block ? new Promise(() => {}) : 'allow';
      },
    });
    await client.start(execParams('p1', ['sleep', '60']));
    const first = server.peers[0]!;
    first.send({ kind: 'request', id: 'np-1', method: 'network/policyRequest', params: question('p1') });
    await waitFor(() => signals.length === 1, { what: 'the decider to be asked' });
    first.drop();
    await waitFor(() => signals[0]!.aborted, { what: 'the decision to be cancelled' });
    const second = await server.connections(2);
    await waitFor(() => client.state === 'ready', { what: 'the session to be resumed' });
    block = false;
    // Server request ids are per connection: the new one starts again at np-1.
    expect((await ask(second, 'np-1', question('p1'))).result).toEqual({ decision: { type: 'allow' } });
    expect(first.received.some((m) => m.id === 'np-1')).toBe(false);
  });
});

describe('network/policyDecision', () => {
  test('every decision reaches the listener; denials are kept per process in the local record shape', async () => {
    await using server = await ScriptedServer.start(script);
    const { logger, records } = captureLogger();
    const heard: NetworkPolicyDecisionNotification[] = [];
    await using client = await ExecServerClient.connect({
      url: server.url,
      logger,
      onNetworkPolicyDecision: (decision) => heard.push(decision),
    });
    const proc = await client.start(execParams('p1', ['true']));
    const peer = server.peers[0]!;
    const allowed = {
      processId: 'p1',
      request: { protocol: 'https_connect', host: 'registry.npmjs.org', port: 443 },
      decision: 'allow',
      rule: 'allow:*.npmjs.org',
      timestamp: '2025-01-31T12:00:00.000Z',
    };
    const denied = {
      processId: 'p1',
      request: { protocol: 'http', host: 'evil.test', port: 8080 },
      decision: 'deny',
      rule: 'deny:evil.test',
      reason: 'denied',
      timestamp: '2025-01-31T12:00:01.000Z',
    };
    const asked = {
      processId: 'p1',
      request: { protocol: 'socks5_tcp', host: '::1', port: 22 },
      decision: 'deny',
      rule: 'decider',
      reason: 'deciderAsk',
      timestamp: '2025-01-31T12:00:02.000Z',
    };
    const unknownProtocol = { ...denied, request: { protocol: 'quic', host: 'q.test', port: 443 } };
    const otherProcess = { ...denied, processId: 'p2' };
    for (const params of [allowed, denied, { processId: 'p1' }, asked, unknownProtocol, otherProcess])
      peer.notify('network/policyDecision', params);
    await waitFor(() => heard.length === 5, { what: 'the decisions' });
    expect(heard).toEqual([allowed, denied, asked, unknownProtocol, otherProcess]);
    expect(records.some((r) => r.message.startsWith('invalid network/policyDecision'))).toBe(true);
    expect(proc.networkDenials()).toEqual([
      {
        kind: 'network',
        protocol: 'http',
        host: 'evil.test',
        port: 8080,
        rule: 'deny:evil.test',
        reason: 'denied',
        message: 'evil.test:8080 is denied by the network policy (reason: denied, rule: deny:evil.test)',
        timestampMs: Date.parse('2025-01-31T12:00:01.000Z'),
      },
      {
        kind: 'network',
        protocol: 'socks5',
        host: '::1',
        port: 22,
        rule: 'decider',
        reason: 'deciderAsk',
        message: '[::1]:22 is denied by the network policy (reason: deciderAsk, rule: decider)',
        timestampMs: Date.parse('2025-01-31T12:00:02.000Z'),
      },
    ]);
    // The connection is unaffected by the invalid one.
    expect(client.state).toBe('ready');
    await proc.close();
  });
});
