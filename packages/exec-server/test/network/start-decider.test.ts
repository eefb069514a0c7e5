// Per-start network deciders on the in-process backend (the contract's `StartOptions`): a process
// started with a `networkPolicyDecider` has its `network/policyRequest`s answered by it, every
// other process asks the table's `networkPolicyRequester`. Real bubblewrap, proxy and bridge.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type ExecParams,
  fromUtf8,
  type NetworkPolicyRequestParams,
  type NetworkPolicyResponse,
  pathToFileUri,
} from '@execd/protocol';
import type { ExecProcess, NetworkPolicyDecider } from '@execd/protocol/contract';
import { ProcessTracker } from '@execd/test-kit';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { LocalBackend } from '../../src/local/local-backend.ts';
import { type Origin, startOrigin, TEST_RESOLVER } from './helpers.ts';

const tracker = new ProcessTracker();
let origin: Origin;
let workspace: string;

beforeEach(async () => {
  origin = await startOrigin();
  workspace = realpathSync(mkdtempSync(join(tmpdir(), 'execd-start-decider-')));
});

afterEach(async () => {
  await origin.close();
  rmSync(workspace, { recursive: true, force: true });
});

/** A `proxied` process that fetches `ask.test` (no pattern matches it: the decider is asked). */
function askParams(processId: string): ExecParams {
  const url = `http://ask.test:${origin.port}/${processId}`;
  return {
    processId,
    argv: ['/bin/bash', '-c', `curl -sS --max-time 20 ${url}; echo; echo code=$?`],
    cwd: pathToFileUri(workspace),
    env: { PATH: '/usr/local/bin:/usr/bin:/bin' },
    tty: false,
    pipeStdin: false,
    enforceManagedNetwork: false,
    sandbox: { profile: 'workspace-write', network: 'proxied' },
    networkProxy: { allowedDomains: ['allowed.test'], policyCallbacks: true },
    managedNetwork: { loopbackPorts: [origin.port], allowLocalBinding: false },
  };
}

async function output(backend: LocalBackend, proc: ExecProcess): Promise<string> {
  tracker.track(backend.table);
  let afterSeq = 0;
  let text = '';
  for (;;) {
    const read = await proc.read({ afterSeq, waitMs: 2_000 });
    text += fromUtf8(Buffer.concat(read.chunks.map((chunk) => chunk.chunk)));
    afterSeq = read.nextSeq - 1;
    if (read.closed) return text;
  }
}

describe('LocalBackend.start with a networkPolicyDecider', () => {
  test("the start's decider answers its process; others ask the table's requester", async () => {
    const tableAsked: string[] = [];
    const requester = async (params: NetworkPolicyRequestParams): Promise<NetworkPolicyResponse> => {
      tableAsked.push(params.processId);
      return { decision: { type: 'deny', reason: 'the table says no' } };
    };
    const deciderAsked: string[] = [];
    const decider: NetworkPolicyDecider = ({ processId, request }, { cancelSignal }) => {
      deciderAsked.push(`${processId} ${request.host}:${request.port} ${cancelSignal.aborted}`);
      return 'allow';
    };
    await using backend = new LocalBackend({
      networkResolver: TEST_RESOLVER,
      networkPolicyRequester: requester,
    });
    const decided = await backend.start(askParams('with-decider'), { networkPolicyDecider: decider });
    const plain = await backend.start(askParams('without'));
    const [decidedText, plainText] = await Promise.all([output(backend, decided), output(backend, plain)]);

    expect(decidedText).toContain(`hello ask.test:${origin.port}/with-decider`);
    expect(deciderAsked).toEqual([`with-decider ask.test:${origin.port} false`]);
    expect(decided.networkDenials()).toEqual([]);

    expect(plainText).not.toContain('hello ask.test');
    expect(tableAsked).toEqual(['without']);
    expect(plain.networkDenials().map((denial) => [denial.host, denial.reason])).toEqual([
      ['ask.test', 'deciderDenied'],
    ]);
  });

  test('an answer that is no decision denies the connection (deciderFailed)', async () => {
    await using backend = new LocalBackend({ networkResolver: TEST_RESOLVER });
    const decider = (() => 'perhaps') as unknown as NetworkPolicyDecider;
    const proc = await backend.start(askParams('odd'), { networkPolicyDecider: decider });
    const text = await output(backend, proc);
    expect(text).not.toContain('hello ask.test');
    expect(proc.networkDenials().map((denial) => denial.reason)).toEqual(['deciderFailed']);
  });
});
