// Spec §2.3 handshake and session rules, and the §8.6 handler tests, without sockets.
import { type EnvironmentInfo, ExecError, pathToFileUri, RpcError } from '@execd/protocol';
import { ProcessTracker, waitFor } from '@execd/test-kit';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { LocalProcessTable } from '../../src/local/index.ts';
import { ConnectionHandler } from '../../src/server/connection-handler.ts';
import { SessionRegistry } from '../../src/server/session-registry.ts';
import type { ConnectionNotification, ProcessNotification, ProcessTable } from '../../src/types.ts';
import { collectGarbage } from '../helpers/collect-garbage.ts';
import { FakeProcessTable } from '../helpers/fake-process-table.ts';

const INFO: EnvironmentInfo = {
  shell: { name: 'sh', path: '/bin/sh' },
  capabilities: {} as EnvironmentInfo['capabilities'],
};
const CWD = pathToFileUri(process.cwd());
const tracker = new ProcessTracker();
const registries: SessionRegistry[] = [];

afterEach(async () => {
  await Promise.all(registries.splice(0).map((registry) => registry.close()));
  vi.useRealTimers();
});

function setup(options: { ttlMs?: number; real?: boolean } = {}) {
  const tables: ProcessTable[] = [];
  const registry = new SessionRegistry({
    detachedTtlMs: options.ttlMs ?? 30_000,
    createProcessTable: () => {
      const table = options.real ? new LocalProcessTable() : new FakeProcessTable();
      tables.push(table);
      return table;
    },
  });
  registries.push(registry);
  const connect = () => {
    const notifications: (ProcessNotification | ConnectionNotification)[] = [];
    const handler = new ConnectionHandler({
      registry,
      environmentInfo: () => INFO,
      notify: (notification) => notifications.push(notification),
    });
    return { handler, notifications };
  };
  return { registry, tables, connect };
}

async function expectRpc(
  promise: Promise<unknown>,
  code: RpcError['code'],
  message?: string,
): Promise<RpcError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error, `expected ${code}`).toBeInstanceOf(RpcError);
  const rpc = error as RpcError;
  expect(rpc.code).toBe(code);
  if (message !== undefined) expect(rpc.message).toBe(message);
  return rpc;
}

const finished: WeakRef<ConnectionHandler>[] = [];

async function ready(handler: ConnectionHandler, resumeSessionId?: string): Promise<string> {
  const result = (await handler.handleRequest('initialize', { clientName: 't', resumeSessionId })) as {
    sessionId: string;
  };
  handler.initialized();
  return result.sessionId;
}

describe('handshake', () => {
  test('requests before initialize name their method family', async () => {
    const { connect } = setup();
    const { handler } = connect();
    const start = { processId: 'p', argv: ['true'], cwd: CWD, env: {}, tty: false };
    await expectRpc(
      handler.handleRequest('process/start', start),
      'invalidRequest',
      'client must call initialize before using exec methods',
    );
    await expectRpc(
      handler.handleRequest('environment/info', {}),
      'invalidRequest',
      'client must call initialize before using environment info methods',
    );
    await expectRpc(
      handler.handleRequest('environment/status', null),
      'invalidRequest',
      'client must call initialize before using environment status methods',
    );
    await handler.handleRequest('initialize', { clientName: 't' });
    await expectRpc(
      handler.handleRequest('environment/info', {}),
      'invalidRequest',
      'client must send initialized before using environment info methods',
    );
    await expectRpc(
      handler.handleRequest('process/read', { processId: 'p' }),
      'invalidRequest',
      'client must send initialized before using exec methods',
    );
    handler.initialized();
    expect(await handler.handleRequest('environment/status', {})).toEqual({ status: 'ready' });
    expect(await handler.handleRequest('environment/info', undefined)).toEqual(INFO);
  });

  test('initialize may only be sent once per connection', async () => {
    const { connect } = setup();
    const { handler } = connect();
    await handler.handleRequest('initialize', { clientName: 't' });
    await expectRpc(
      handler.handleRequest('initialize', { clientName: 't' }),
      'invalidRequest',
      'initialize may only be sent once per connection',
    );
  });

  test('a failed initialize may be retried on the same connection', async () => {
    const { connect } = setup();
    const { handler } = connect();
    await expectRpc(
      handler.handleRequest('initialize', { clientName: 't', resumeSessionId: 'nope' }),
      'invalidRequest',
      'unknown session id nope',
    );
    const sessionId = await ready(handler);
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
  });

  test('`initialized` before `initialize` is a protocol error', () => {
    const { connect } = setup();
    const { handler } = connect();
    let caught: unknown;
    try {
      handler.initialized();
    } catch (error) {
      caught = error;
    }
    expect(ExecError.is(caught) && caught.code).toBe('protocol');
    expect((caught as Error).message).toBe('received `initialized` notification before `initialize`');
  });

  test('unknown methods and server-side methods are -32601 with the original text', async () => {
    const { connect } = setup();
    const { handler } = connect();
    await expectRpc(
      handler.handleRequest('fs/unwatchMissing', {}),
      'methodNotFound',
      'exec-server stub does not implement `fs/unwatchMissing` yet',
    );
    await expectRpc(handler.handleRequest('fs/missingChanged', { watchId: 1 }), 'methodNotFound');
    await expectRpc(handler.handleRequest('process/output', {}), 'methodNotFound');
    await expectRpc(handler.handleRequest('initialized', {}), 'methodNotFound');
    await expectRpc(handler.handleRequest('toString', {}), 'methodNotFound');
  });

  test('invalid params are -32602 even before initialize', async () => {
    const { connect } = setup();
    const { handler } = connect();
    await expectRpc(handler.handleRequest('process/start', { processId: 'p' }), 'invalidParams');
    await expectRpc(handler.handleRequest('initialize', {}), 'invalidParams');
    await expectRpc(handler.handleRequest('environment/info', 5), 'invalidParams');
  });
});

describe('sessions', () => {
  test('active_session_resume_is_rejected', async () => {
    const { connect } = setup();
    const a = connect();
    const sessionId = await ready(a.handler);
    const b = connect();
    await expectRpc(
      b.handler.handleRequest('initialize', { clientName: 't', resumeSessionId: sessionId }),
      'sessionAlreadyAttached',
      `session ${sessionId} is already attached to another connection`,
    );
    a.handler.detach();
    expect(await ready(b.handler, sessionId)).toBe(sessionId);
  });

  test('notifications follow the session to the resuming connection', async () => {
    const { connect, tables } = setup();
    const a = connect();
    const sessionId = await ready(a.handler);
    const table = tables[0] as FakeProcessTable;
    await a.handler.handleRequest('process/start', {
      processId: 'p',
      argv: ['x'],
      cwd: CWD,
      env: {},
      tty: false,
    });
    table.output('p', 'one');
    a.handler.detach();
    table.output('p', 'dropped while detached');
    const b = connect();
    await ready(b.handler, sessionId);
    table.output('p', 'three');
    expect(a.notifications.map((n) => ('seq' in n.params ? n.params.seq : undefined))).toEqual([1]);
    expect(b.notifications.map((n) => ('seq' in n.params ? n.params.seq : undefined))).toEqual([3]);
    const read = (await b.handler.handleRequest('process/read', { processId: 'p' })) as { chunks: unknown[] };
    expect(read.chunks).toHaveLength(3);
  });

  test('long_poll_read_fails_after_session_resume', async () => {
    const { connect, tables } = setup({ real: true });
    const a = connect();
    const sessionId = await ready(a.handler);
    await a.handler.handleRequest('process/start', {
      processId: 'p',
      argv: ['sleep', '30'],
      cwd: CWD,
      env: {},
      tty: false,
    });
    tracker.track(tables[0]!);
    const read = a.handler.handleRequest('process/read', { processId: 'p', waitMs: 25_000 });
    a.handler.detach();
    const b = connect();
    await ready(b.handler, sessionId);
    await expectRpc(read, 'invalidRequest', 'session has been resumed by another connection');
    expect(a.handler.isSessionAttached()).toBe(false);
    await expectRpc(
      a.handler.handleRequest('environment/status', {}),
      'invalidRequest',
      'session has been resumed by another connection',
    );
    expect(await b.handler.handleRequest('process/terminate', { processId: 'p' })).toEqual({ running: true });
  });

  test('an expired detached session is forgotten and its processes terminated', async () => {
    const { connect, tables, registry } = setup({ ttlMs: 20 });
    const a = connect();
    const sessionId = await ready(a.handler);
    a.handler.detach();
    const table = tables[0] as FakeProcessTable;
    await waitFor(() => table.shutdownCalls === 1, { what: 'the session to expire' });
    expect(table.subscriberCount).toBe(0);
    expect(registry.size).toBe(0);
    const b = connect();
    await expectRpc(
      b.handler.handleRequest('initialize', { clientName: 't', resumeSessionId: sessionId }),
      'invalidRequest',
      `unknown session id ${sessionId}`,
    );
  });

  test('a resume after the TTL but before the expiry timer ran is refused and reaps the session', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const { connect, tables } = setup({ ttlMs: 1_000 });
    const a = connect();
    const sessionId = await ready(a.handler);
    a.handler.detach();
    vi.setSystemTime(Date.now() + 1_001);
    const b = connect();
    await expectRpc(
      b.handler.handleRequest('initialize', { clientName: 't', resumeSessionId: sessionId }),
      'invalidRequest',
      `unknown session id ${sessionId}`,
    );
    expect((tables[0] as FakeProcessTable).shutdownCalls).toBe(1);
  });

  test('a resume inside the TTL cancels the expiry', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const { connect, tables } = setup({ ttlMs: 1_000 });
    const a = connect();
    const sessionId = await ready(a.handler);
    a.handler.detach();
    vi.advanceTimersByTime(999);
    const b = connect();
    await ready(b.handler, sessionId);
    vi.advanceTimersByTime(10_000);
    expect((tables[0] as FakeProcessTable).shutdownCalls).toBe(0);
  });

  test('a detached session does not keep its finished connection alive for the TTL', async () => {
    const { connect, tables } = setup();
    const sessionId = await (async () => {
      const a = connect();
      const id = await ready(a.handler);
      a.handler.detach();
      finished.push(new WeakRef(a.handler));
      return id;
    })();
    // Thousands of reconnecting clients each leave a detached session: it must not hold the
    // old connection (its handler, and through it the socket, buffers and transport) for 30 s.
    await collectGarbage();
    expect(finished.pop()!.deref()).toBeUndefined();
    // Still resumable, with its table.
    const b = connect();
    expect(await ready(b.handler, sessionId)).toBe(sessionId);
    expect(tables).toHaveLength(1);
  });

  test('a connection that drops while initializing does not leave its session attached', async () => {
    const { connect } = setup();
    const a = connect();
    const pending = a.handler.handleRequest('initialize', { clientName: 't' });
    a.handler.detach();
    const { sessionId } = (await pending) as { sessionId: string };
    const b = connect();
    expect(await ready(b.handler, sessionId)).toBe(sessionId);
  });

  test('registry close shuts every session down, attached or not', async () => {
    const { connect, tables, registry } = setup();
    await ready(connect().handler);
    const detached = connect();
    await ready(detached.handler);
    detached.handler.detach();
    await registry.close();
    expect(tables.map((table) => (table as FakeProcessTable).shutdownCalls)).toEqual([1, 1]);
    await expectRpc(connect().handler.handleRequest('initialize', { clientName: 't' }), 'internal');
  });
});

describe('outbound back-pressure', () => {
  /** A fake table that records the flow control it is given. */
  class FlowRecordingTable extends FakeProcessTable {
    readonly pauses: boolean[] = [];
    setOutputPaused(paused: boolean): void {
      this.pauses.push(paused);
    }
  }

  function setupFlow() {
    const tables: FlowRecordingTable[] = [];
    const registry = new SessionRegistry({
      createProcessTable: () => {
        const table = new FlowRecordingTable();
        tables.push(table);
        return table;
      },
    });
    registries.push(registry);
    const connect = () => new ConnectionHandler({ registry, environmentInfo: () => INFO, notify: () => {} });
    return { tables, connect };
  }

  test('the attached connection pauses and resumes its session table; detach resumes', async () => {
    const { tables, connect } = setupFlow();
    const handler = connect();
    await ready(handler);
    handler.setOutboundCongested(true);
    handler.setOutboundCongested(true);
    handler.setOutboundCongested(false);
    handler.setOutboundCongested(true);
    handler.detach();
    // After detach the connection no longer steers the table.
    handler.setOutboundCongested(false);
    handler.setOutboundCongested(true);
    expect(tables[0]?.pauses).toEqual([true, false, true, false]);
  });

  test('congestion before initialize applies once the session is attached', async () => {
    const { tables, connect } = setupFlow();
    const handler = connect();
    handler.setOutboundCongested(true);
    await ready(handler);
    expect(tables[0]?.pauses).toEqual([true]);
  });

  test('a resuming connection steers the table; the old one no longer does', async () => {
    const { tables, connect } = setupFlow();
    const first = connect();
    const sessionId = await ready(first);
    first.setOutboundCongested(true);
    first.detach();
    const second = connect();
    await ready(second, sessionId);
    first.setOutboundCongested(false);
    second.setOutboundCongested(true);
    expect(tables[0]?.pauses).toEqual([true, false, true]);
  });
});
