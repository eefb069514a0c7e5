// The managed network's life in the process table (spec §2.4, §3.1, §8.6), with scripted children
// and a real proxy: one proxy per proxied process, kept until the process closes, decisions as
// notifications, denials per process, terminate cancelling pending questions.
import type { NetworkProxy } from '@execd/network-proxy';
import { type ExecParams, type NetworkPolicyRequestParams, RpcError } from '@execd/protocol';
import { waitFor } from '@execd/test-kit';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { LocalBackend } from '../../src/local/local-backend.ts';
import { LocalProcessTable, type LocalProcessTableOptions } from '../../src/local/local-process-table.ts';
import type { NetworkPolicyRequester } from '../../src/local/process-network.ts';
import type { ProcessNotification } from '../../src/types.ts';
import { type FakeSpawnedProcess, fakeSpawner } from '../helpers/fake-spawned-process.ts';
import { getThroughProxy, TEST_RESOLVER } from './helpers.ts';

const tables: LocalProcessTable[] = [];

beforeEach(() => {});

afterEach(async () => {
  await Promise.all(tables.splice(0).map((table) => table.shutdown()));
});

const PROXIED = { profile: 'workspace-write', network: 'proxied' } as const;

const params = (overrides: Partial<ExecParams> = {}): ExecParams => ({
  processId: 'proc-1',
  argv: ['true'],
  cwd: 'file:///tmp',
  env: {},
  tty: false,
  pipeStdin: false,
  enforceManagedNetwork: false,
  sandbox: PROXIED,
  networkProxy: { allowedDomains: ['allowed.test'], deniedDomains: ['denied.test'] },
  // The test names resolve to 127.0.0.1: let allowed names reach it (port 9: nothing listens, 502).
  managedNetwork: { loopbackPorts: [], allowLocalBinding: true },
  ...overrides,
});

/** A requester the test answers by hand; it honours cancellation as a real connection does. */
function manualRequester() {
  const questions: {
    params: NetworkPolicyRequestParams;
    signal: AbortSignal;
    answer: (type: 'allow' | 'deny' | 'ask', reason?: string) => void;
  }[] = [];
  const requester: NetworkPolicyRequester = (params, { cancelSignal }) =>
    new Promise((resolve, reject) => {
      cancelSignal.addEventListener('abort', () => reject(cancelSignal.reason), { once: true });
      questions.push({
        params,
        signal: cancelSignal,
        answer: (type, reason) =>
          resolve({ decision: type === 'allow' ? { type } : { type, ...(reason ? { reason } : {}) } }),
      });
    });
  return { requester, questions };
}

function setup(options: LocalProcessTableOptions = {}) {
  const spawner = fakeSpawner();
  const table = new LocalProcessTable({
    spawner,
    exitGraceMs: 0,
    exitedRetentionMs: 60_000,
    networkResolver: TEST_RESOLVER,
    ...options,
  });
  tables.push(table);
  const notifications: ProcessNotification[] = [];
  table.subscribe((notification) => notifications.push(notification));
  const child = (index = -1): FakeSpawnedProcess => spawner.launched.at(index)!.process;
  const proxy = (index = -1): NetworkProxy => {
    const managed = spawner.launched.at(index)!.request.managedNetwork;
    if (managed === undefined) throw new Error('the spawn request has no managed network');
    return managed.proxy;
  };
  const decisions = () =>
    notifications.flatMap((n) => (n.method === 'network/policyDecision' ? [n.params] : []));
  return { table, spawner, notifications, child, proxy, decisions };
}

describe('one proxy per proxied process', () => {
  test('only proxied processes get a proxy; enforceManagedNetwork turns a full network into proxied', async () => {
    const { table, spawner } = setup();
    await table.start(params({ processId: 'a' }));
    await table.start(params({ processId: 'b', sandbox: { profile: 'workspace-write' } }));
    await table.start(params({ processId: 'c', sandbox: undefined, enforceManagedNetwork: true }));
    await table.start(
      params({ processId: 'd', sandbox: { profile: 'workspace-write' }, enforceManagedNetwork: true }),
    );
    const requests = spawner.launched.map(({ request }) => request);
    expect(requests.map((request) => request.managedNetwork !== undefined)).toEqual([
      true,
      false,
      true,
      false,
    ]);
    expect(requests[2]!.sandbox).toEqual({ profile: 'danger-full-access', network: 'proxied' });
    expect(requests[3]!.sandbox).toEqual({ profile: 'workspace-write', network: 'off' });
    expect(requests[0]!.managedNetwork!.proxy).not.toBe(requests[2]!.managedNetwork!.proxy);
  });

  test('exited_process_keeps_network_proxy_until_inherited_streams_close', async () => {
    const { table, child, proxy, notifications } = setup();
    await table.start(params());
    const running = proxy();
    child().exit(0);
    await waitFor(() => notifications.some((n) => n.method === 'process/exited'));
    // A descendant still holding the pipes may still use the network.
    expect(running.closed).toBe(false);
    expect((await getThroughProxy(running.httpSocketPath, 'http://denied.test/')).status).toBe(403);
    child().endStreams();
    await waitFor(() => running.closed);
    expect(notifications.at(-1)?.method).toBe('process/closed');
  });

  test('a bad allow pattern is -32602 and leaves no entry; a failed spawn closes the proxy', async () => {
    const { table } = setup();
    const error = await table
      .start(params({ networkProxy: { allowedDomains: ['exa mple.com'] } }))
      .catch((caught: unknown) => caught);
    expect(RpcError.is(error) && error.code).toBe('invalidParams');
    expect(table.list().processes).toEqual([]);

    let seen: NetworkProxy | undefined;
    const failing = new LocalProcessTable({
      networkResolver: TEST_RESOLVER,
      spawner: async (request) => {
        seen = request.managedNetwork?.proxy;
        throw new Error('no bubblewrap here');
      },
    });
    tables.push(failing);
    await expect(failing.start(params())).rejects.toMatchObject({ code: 'internal' });
    expect(seen?.closed).toBe(true);
  });

  test('a start cancelled by terminate closes its proxy', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const spawner = fakeSpawner({ onSpawn: () => gate });
    const table = new LocalProcessTable({ spawner, networkResolver: TEST_RESOLVER });
    tables.push(table);
    const starting = table.start(params());
    await waitFor(() => table.list().processes.length === 1);
    expect(await table.terminate({ processId: 'proc-1' })).toEqual({ running: true });
    release();
    await expect(starting).rejects.toMatchObject({ message: 'process proc-1 start was cancelled' });
    expect(spawner.launched[0]!.request.managedNetwork!.proxy.closed).toBe(true);
  });
});

describe('decisions and denials', () => {
  test('every decision is a network/policyDecision notification; denials stay readable', async () => {
    const { table, child, proxy, decisions } = setup();
    await table.start(params());
    const allowed = await getThroughProxy(proxy().httpSocketPath, 'http://allowed.test:9/');
    expect(allowed.status).toBe(502); // allowed, but nothing listens on port 9
    const denied = await getThroughProxy(proxy().httpSocketPath, 'http://denied.test/x');
    expect(denied.status).toBe(403);
    expect(denied.headers['x-execd-denial-reason']).toBe('denied');
    expect(decisions()).toEqual([
      {
        processId: 'proc-1',
        request: { protocol: 'http', host: 'allowed.test', port: 9 },
        decision: 'allow',
        rule: 'allow:allowed.test',
        timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      },
      {
        processId: 'proc-1',
        request: { protocol: 'http', host: 'denied.test', port: 80 },
        decision: 'deny',
        rule: 'deny:denied.test',
        reason: 'denied',
        timestamp: expect.any(String),
      },
    ]);
    expect(table.networkDenials('proc-1')).toEqual([
      expect.objectContaining({ kind: 'network', host: 'denied.test', port: 80, reason: 'denied' }),
    ]);
    expect(table.networkDenials('nope')).toBeUndefined();
    child().exit(0);
    child().endStreams();
    await waitFor(() => proxy().closed);
    // Still there after the proxy closed (the record keeps it until eviction).
    expect(table.networkDenials('proc-1')).toHaveLength(1);
  });

  test('sandboxDenied: a non-zero exit after a denial; not for exit 0, not without a denial', async () => {
    const { table, child, proxy, notifications } = setup();
    const exited = (processId: string) =>
      notifications.find((n) => n.method === 'process/exited' && n.params.processId === processId)?.params;
    for (const [processId, deny, code, expected] of [
      ['fails-after-denial', true, 22, true],
      ['succeeds-after-denial', true, 0, false],
      ['fails-without-denial', false, 1, false],
    ] as const) {
      await table.start(params({ processId }));
      if (deny) await getThroughProxy(proxy().httpSocketPath, 'http://denied.test/');
      child().exit(code);
      child().endStreams();
      await waitFor(() => exited(processId));
      expect(exited(processId)).toMatchObject({ exitCode: code, sandboxDenied: expected });
      expect((await table.read({ processId })).sandboxDenied).toBe(expected);
    }
  });

  test('executor_proxy_sends_final_network_policy_notification: the last decision precedes exit and close', async () => {
    const { table, child, proxy, notifications } = setup();
    await table.start(params());
    await getThroughProxy(proxy().httpSocketPath, 'http://denied.test/final');
    child().exit(1);
    child().endStreams();
    await waitFor(() => notifications.some((n) => n.method === 'process/closed'));
    expect(notifications.map((n) => n.method)).toEqual([
      'network/policyDecision',
      'process/exited',
      'process/closed',
    ]);
  });

  test('the in-process handle offers the denials for "approve and retry"', async () => {
    const spawner = fakeSpawner();
    await using backend = new LocalBackend({ spawner, exitGraceMs: 0, networkResolver: TEST_RESOLVER });
    const handle = await backend.start(params());
    const proxy = spawner.launched[0]!.request.managedNetwork!.proxy;
    await getThroughProxy(proxy.httpSocketPath, 'http://elsewhere.test/');
    expect(handle.networkDenials()).toEqual([
      expect.objectContaining({ host: 'elsewhere.test', reason: 'notAllowed', rule: 'no-match' }),
    ]);
  });
});

describe('the decider (policy callbacks)', () => {
  test('unmatched hosts are asked; answers are cached per process; ask and deny refuse', async () => {
    const { requester, questions } = manualRequester();
    const { table, proxy, decisions } = setup({ networkPolicyRequester: requester });
    await table.start(params({ networkProxy: { policyCallbacks: true } }));
    const first = getThroughProxy(proxy().httpSocketPath, 'http://ask.test:9/');
    await waitFor(() => questions.length === 1);
    expect(questions[0]!.params).toEqual({
      processId: 'proc-1',
      request: { protocol: 'http', host: 'ask.test', port: 9 },
    });
    questions[0]!.answer('allow');
    expect((await first).status).toBe(502); // allowed; nothing listens on port 9
    expect((await getThroughProxy(proxy().httpSocketPath, 'http://ask.test:9/')).status).toBe(502);
    expect(questions).toHaveLength(1);

    const second = getThroughProxy(proxy().httpSocketPath, 'http://unknown.test/');
    await waitFor(() => questions.length === 2);
    questions[1]!.answer('ask', 'a person must approve unknown.test');
    const refused = await second;
    expect(refused.status).toBe(403);
    expect(refused.headers['x-execd-denial-reason']).toBe('deciderAsk');
    expect(refused.body).toContain('a person must approve unknown.test');
    expect(decisions().map((d) => [d.request.host, d.decision, d.rule, d.reason])).toEqual([
      ['ask.test', 'allow', 'decider', undefined],
      ['ask.test', 'allow', 'decider', undefined],
      ['unknown.test', 'deny', 'decider', 'deciderAsk'],
    ]);
  });

  test('a timeout denies (uncached); a late answer is cached for the next attempt', async () => {
    const { requester, questions } = manualRequester();
    const { table, proxy } = setup({ networkPolicyRequester: requester });
    await table.start(params({ networkProxy: { policyDecisionTimeoutMs: 200 } }));
    const timedOut = await getThroughProxy(proxy().httpSocketPath, 'http://ask.test:9/');
    expect(timedOut.headers['x-execd-denial-reason']).toBe('deciderTimeout');
    questions[0]!.answer('allow');
    await waitFor(
      async () => (await getThroughProxy(proxy().httpSocketPath, 'http://ask.test:9/')).status === 502,
    );
    expect(questions).toHaveLength(1);
  });

  test('without anyone to ask, callbacks deny (uncached)', async () => {
    const { table, proxy } = setup();
    await table.start(params({ networkProxy: { policyCallbacks: true } }));
    const refused = await getThroughProxy(proxy().httpSocketPath, 'http://ask.test/');
    expect(refused.headers['x-execd-denial-reason']).toBe('deciderFailed');
  });

  test('termination_request_after_exit_cancels_network_policy_decisions', async () => {
    const { requester, questions } = manualRequester();
    const { table, child, proxy } = setup({ networkPolicyRequester: requester });
    await table.start(params({ networkProxy: { policyCallbacks: true } }));
    child().exit(0); // a descendant keeps the pipes, and asks
    const waiting = getThroughProxy(proxy().httpSocketPath, 'http://ask.test/');
    await waitFor(() => questions.length === 1);
    expect(await table.terminate({ processId: 'proc-1' })).toEqual({ running: false });
    expect(questions[0]!.signal.aborted).toBe(true);
    expect((await waiting).headers['x-execd-denial-reason']).toBe('deciderFailed');
    // Later questions are not asked at all.
    const later = await getThroughProxy(proxy().httpSocketPath, 'http://unknown.test/');
    expect(later.headers['x-execd-denial-reason']).toBe('deciderFailed');
    expect(questions).toHaveLength(1);
    child().endStreams();
    await waitFor(() => proxy().closed);
  });

  test('a timeout alone enables callbacks, so it bounds the process id too', async () => {
    const { table } = setup();
    for (const processId of ['', 'x'.repeat(257)]) {
      await expect(
        table.start(params({ processId, networkProxy: { policyDecisionTimeoutMs: 500 } })),
      ).rejects.toMatchObject({
        message: 'callback-enabled process ID must be non-empty and at most 256 bytes',
      });
    }
    await table.start(params({ processId: 'x'.repeat(256), networkProxy: { policyDecisionTimeoutMs: 500 } }));
  });
});
