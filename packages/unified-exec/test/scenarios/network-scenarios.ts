import { createStaticResolver } from '@execd/network-proxy';
import { type Origin, startOrigin } from '@execd/test-kit';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  type ApprovalDecision,
  type ApprovalRequest,
  ExecPolicyManager,
  RulesParser,
} from '../../src/index.ts';
import { createHarness, type HarnessMode } from '../helpers/harness.ts';

// The test host names all resolve to 127.0.0.1 in the proxy; the real network is never used.
const RESOLVER = createStaticResolver({
  'allowed.test': '127.0.0.1',
  'denied.test': '127.0.0.1',
  'ask.test': '127.0.0.1',
  'refused.test': '127.0.0.1',
});

/** A managed network: allow/deny patterns, and unknown hosts put to the Approver (purpose `network`). */
export function defineNetworkScenarios(mode: HarnessMode): void {
  describe.skipIf(process.platform !== 'linux')(`${mode}: managed network`, () => {
    // In a child process: the proxy never connects to its executor's (this process's) ports.
    let origin: Origin;
    let port = 0;
    beforeEach(async () => {
      origin = await startOrigin();
      port = origin.port;
    });
    afterEach(async () => {
      await origin.close();
    });

    const curl = (host: string): string =>
      `curl -sS --max-time 30 -w ' status=%{http_code}\\n' http://${host}:${port}/x 2>&1`;

    test('allowed hosts pass, denied ones get 403, unknown ones are asked and follow the answer', async () => {
      const asked: ApprovalRequest[] = [];
      const approver = (request: ApprovalRequest): ApprovalDecision => {
        asked.push(request);
        return request.network?.host === 'ask.test' ? 'approved' : 'denied';
      };
      await using h = await createHarness(mode, {
        // The refusals must be seen at the early exit to be offered a retry: a generous grace
        // keeps that deterministic on a loaded machine (each call still returns at the exit).
        manager: { approvalPolicy: 'on-request', approver, earlyExitGraceMs: 20_000 },
        environment: {
          permissionProfile: 'workspace-write',
          managedNetwork: {
            allowedDomains: ['allowed.test'],
            deniedDomains: ['denied.test'],
            loopbackPorts: [port],
          },
        },
        networkResolver: RESOLVER,
      });
      const allowed = await h.execParsed({ cmd: curl('allowed.test'), yield_time_ms: 30_000 });
      expect(allowed.output).toBe(`hello allowed.test:${port}/x status=200\n`);
      const approved = await h.execParsed({ cmd: curl('ask.test'), yield_time_ms: 30_000 });
      expect(approved.output).toBe(`hello ask.test:${port}/x status=200\n`);
      expect(asked).toEqual([
        expect.objectContaining({
          purpose: 'network',
          reason: 'Network access to "ask.test" is blocked by policy.',
          network: { host: 'ask.test', port, protocol: 'http' },
          processId: 1000,
        }),
      ]);
      const refused = await h.execParsed({ cmd: `${curl('refused.test')}; exit 7`, yield_time_ms: 30_000 });
      expect(refused.output).toContain('status=403');
      expect(refused.exitCode).toBe(7);
      const denied = await h.execParsed({ cmd: `${curl('denied.test')}; exit 7`, yield_time_ms: 30_000 });
      expect(denied.output).toContain('status=403');
      // Only the unknown hosts were asked (and, after each refusal, whether to retry unsandboxed).
      expect(
        asked.filter((request) => request.purpose === 'network').map((request) => request.network?.host),
      ).toEqual(['ask.test', 'refused.test']);
      expect(asked.filter((request) => request.purpose === 'sandbox_retry')).toHaveLength(2);
    });

    test('network_rule hosts of the exec policy are allowed or denied without asking', async () => {
      const parser = new RulesParser();
      parser.parse(
        'network.rules',
        [
          'network_rule(host="ASK.test:443", protocol="https", decision="allow")',
          'network_rule(host="allowed.test", protocol="http", decision="deny")',
          'network_rule(host="refused.test", protocol="http", decision="prompt")',
        ].join('\n'),
      );
      const asked: ApprovalRequest[] = [];
      const approver = (request: ApprovalRequest): ApprovalDecision => {
        asked.push(request);
        return 'denied';
      };
      await using h = await createHarness(mode, {
        manager: {
          approvalPolicy: 'on-request',
          approver,
          execPolicy: new ExecPolicyManager({ policy: parser.build() }),
        },
        environment: {
          permissionProfile: 'workspace-write',
          managedNetwork: { allowedDomains: ['allowed.test'], loopbackPorts: [port] },
        },
        networkResolver: RESOLVER,
      });
      // Allowed by a rule: not asked.
      const ruled = await h.execParsed({ cmd: curl('ask.test'), yield_time_ms: 30_000 });
      expect(ruled.output).toBe(`hello ask.test:${port}/x status=200\n`);
      // Denied by a rule, although the environment allows it: refused without a question.
      const denied = await h.execParsed({ cmd: `${curl('allowed.test')}; exit 7`, yield_time_ms: 30_000 });
      expect(denied.output).toContain('status=403');
      expect(asked.filter((request) => request.purpose === 'network')).toEqual([]);
      // A prompt rule adds nothing: the host is still asked about.
      await h.execParsed({ cmd: `${curl('refused.test')}; exit 7`, yield_time_ms: 30_000 });
      expect(
        asked.filter((request) => request.purpose === 'network').map((request) => request.network?.host),
      ).toEqual(['refused.test']);
    });
  });
}
