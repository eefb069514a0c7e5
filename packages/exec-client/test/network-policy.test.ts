// The client's managed-network side end to end: a real exec-server in-process, real bubblewrap,
// a real proxy and bridge per `proxied` process, curl inside the sandbox, and the client's
// deciders answering `network/policyRequest` (spec §2.4). Host names are mapped to 127.0.0.1 by
// the proxy's resolver; the real network is never used.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type CodecName,
  type ExecParams,
  type NetworkPolicyDecisionNotification,
  type NetworkPolicyRequestParams,
  pathToFileUri,
} from '@execd/protocol';
import type { NetworkPolicyDecider } from '@execd/protocol/contract';
import { FaultProxy, type Origin, readUntil, startOrigin, waitFor } from '@execd/test-kit';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { ExecServerClient } from '../src/exec-server-client.ts';
import { RemoteBackend } from '../src/remote-backend.ts';
import { FAST_RECOVERY, startTrackedServer } from './helpers/harness.ts';
import { TEST_RESOLVER } from './helpers/network.ts';

let origin: Origin;
let workspace: string;

beforeEach(async () => {
  origin = await startOrigin();
  workspace = realpathSync(mkdtempSync(join(tmpdir(), 'execd-client-policy-')));
});

afterEach(async () => {
  await origin.close();
  rmSync(workspace, { recursive: true, force: true });
});

/** A `proxied` bash script whose unmatched hosts are asked of the client. */
function proxied(processId: string, script: string): ExecParams {
  return {
    processId,
    argv: ['/bin/bash', '-c', script],
    cwd: pathToFileUri(workspace),
    env: { PATH: '/usr/local/bin:/usr/bin:/bin' },
    tty: false,
    pipeStdin: false,
    enforceManagedNetwork: false,
    sandbox: { profile: 'workspace-write', network: 'proxied' },
    networkProxy: { allowedDomains: [], policyCallbacks: true, policyDecisionTimeoutMs: 20_000 },
    managedNetwork: { loopbackPorts: [origin.port], allowLocalBinding: false },
  };
}

const curl = (host: string, path: string): string =>
  `curl -sS --max-time 30 -w ' status=%{http_code}\\n' http://${host}:${origin.port}${path} 2>&1`;

/** A server (requests go to the session's client) and a backend whose client connects to `url`. */
async function rig(
  codec: CodecName,
  client: {
    readonly onNetworkPolicyRequest?: NetworkPolicyDecider;
    readonly onNetworkPolicyDecision?: (decision: NetworkPolicyDecisionNotification) => void;
  } = {},
  viaFaultProxy = false,
) {
  const server = await startTrackedServer({}, { networkResolver: TEST_RESOLVER, exitedRetentionMs: 60_000 });
  const proxy = viaFaultProxy ? await FaultProxy.start({ target: server.url }) : undefined;
  const backend = new RemoteBackend(
    await ExecServerClient.connect({ url: proxy?.url ?? server.url, codec, ...FAST_RECOVERY, ...client }),
  );
  return {
    server,
    proxy,
    backend,
    async [Symbol.asyncDispose]() {
      await backend.close();
      await proxy?.close();
      await server.close();
    },
  };
}

describe.each(['msgpack', 'json'] as CodecName[])('client network policy (%s)', (codec) => {
  test('the per-start decider allows: curl through the proxy reaches the host', async () => {
    const decisions: NetworkPolicyDecisionNotification[] = [];
    // The client-wide decider would deny; the per-start one wins for this process.
    await using r = await rig(codec, {
      onNetworkPolicyRequest: () => ({ type: 'deny', reason: 'client default' }),
      onNetworkPolicyDecision: (decision) => decisions.push(decision),
    });
    const asked: NetworkPolicyRequestParams[] = [];
    const proc = await r.backend.start(proxied('allow', curl('ask.test', '/ok')), {
      networkPolicyDecider: (request) => {
        asked.push(request);
        return 'allow';
      },
    });
    expect(proc.sandboxType).toBe('linuxSeccomp');
    const { text, last } = await readUntil(proc);
    expect(text).toBe(`hello ask.test:${origin.port}/ok status=200\n`);
    expect(last).toMatchObject({ exitCode: 0, sandboxDenied: false });
    expect(asked).toEqual([
      { processId: 'allow', request: { protocol: 'http', host: 'ask.test', port: origin.port } },
    ]);
    expect(decisions).toEqual([
      expect.objectContaining({
        processId: 'allow',
        request: { protocol: 'http', host: 'ask.test', port: origin.port },
        decision: 'allow',
        rule: 'decider',
      }),
    ]);
    expect(proc.networkDenials()).toEqual([]);
    expect(origin.requests).toBe(1);
  });

  test('the client decider denies: the command gets the 403 text, the process a denial record', async () => {
    await using r = await rig(codec, {
      onNetworkPolicyRequest: (request) => ({ type: 'deny', reason: `no ${request.request.host}` }),
    });
    const proc = await r.backend.start(proxied('deny', `${curl('unknown.test', '/no')}\nexit 3`));
    const { text, last } = await readUntil(proc);
    expect(text).toContain(
      `unknown.test:${origin.port} was denied by the network policy decider: no unknown.test`,
    );
    expect(text).toContain('status=403');
    expect(last).toMatchObject({ exitCode: 3, sandboxDenied: true });
    expect(proc.networkDenials()).toEqual([
      {
        kind: 'network',
        protocol: 'http',
        host: 'unknown.test',
        port: origin.port,
        rule: 'decider',
        reason: 'deciderDenied',
        message: `unknown.test:${origin.port} is denied by the network policy (reason: deciderDenied, rule: decider)`,
        timestampMs: expect.any(Number),
      },
    ]);
    expect(origin.requests).toBe(0);
  });
});

test('a question pending when the connection drops is denied; after the resume the decider answers again', async () => {
  let calls = 0;
  const signals: AbortSignal[] = [];
  await using r = await rig(
    'msgpack',
    {
      onNetworkPolicyRequest: (request, { cancelSignal }) => {
        calls += 1;
        signals.push(cancelSignal);
        // The first question is never answered: the connection it came on is cut.
        return request.request.host === 'ask.test' ? new Promise(() => {}) : 'allow';
      },
    },
    true,
  );
  const go = join(workspace, 'go');
  const script = [
    curl('ask.test', '/lost'),
    `while [ ! -e ${go} ]; do sleep 0.05; done`,
    curl('unknown.test', '/after'),
  ].join('\n');
  const proc = await r.backend.start(proxied('recover', script));
  await waitFor(() => calls === 1, { what: 'the first question' });
  r.proxy!.drop();
  await waitFor(() => signals[0]!.aborted, { what: 'the pending decision to be cancelled' });
  await waitFor(() => r.backend.client.state === 'ready' && r.proxy!.stats.open > 0, {
    what: 'the session to be resumed',
  });
  await writeFile(go, '');
  const { text, last } = await readUntil(proc);
  expect(text).toContain('reason: deciderFailed');
  expect(text).toContain(`hello unknown.test:${origin.port}/after status=200\n`);
  expect(last).toMatchObject({ exitCode: 0 });
  expect(calls).toBe(2);
});
