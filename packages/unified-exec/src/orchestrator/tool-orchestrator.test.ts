import { describe, expect, test } from 'vitest';
import { UnifiedExecError } from '../errors.ts';
import type { ApprovalDecision, ApprovalRequest } from './approval.ts';
import { type OrchestratorRequest, type SandboxAttempt, ToolOrchestrator } from './tool-orchestrator.ts';

const request: OrchestratorRequest = {
  callId: 'call-1',
  processId: 1000,
  command: ['/bin/bash', '-c', 'touch /outside'],
  cwd: '/work',
  environmentId: 'local',
  sandboxPermissions: 'use_default',
  sandboxable: true,
};

const denial = (): UnifiedExecError =>
  UnifiedExecError.sandboxDenied('touch: Read-only file system', {
    exitCode: 1,
    text: 'touch: Read-only file system\n',
  });

/** Runs with an attempt that is denied while sandboxed and succeeds unsandboxed. */
async function run(
  policy: 'never' | 'on-failure' | 'on-request' | 'untrusted',
  answers: ApprovalDecision[],
  overrides: Partial<OrchestratorRequest> = {},
): Promise<{
  result: unknown;
  attempts: SandboxAttempt[];
  asked: ApprovalRequest[];
  orchestrator: ToolOrchestrator;
}> {
  const asked: ApprovalRequest[] = [];
  const attempts: SandboxAttempt[] = [];
  const orchestrator = new ToolOrchestrator({
    approvalPolicy: policy,
    approver: (approval) => {
      asked.push(approval);
      return answers.shift() ?? 'denied';
    },
  });
  const result = await orchestrator
    .run({ ...request, ...overrides }, async (attempt) => {
      attempts.push(attempt);
      if (attempt.sandboxed) throw denial();
      return 'ran unsandboxed';
    })
    .catch((error: unknown) => error);
  return { result, attempts, asked, orchestrator };
}

describe('ToolOrchestrator', () => {
  test('never: no question, the denial comes back', async () => {
    const { result, attempts, asked } = await run('never', []);
    expect(UnifiedExecError.isUnifiedExecError(result) && result.kind).toBe('sandboxDenied');
    expect(attempts).toEqual([{ sandboxed: true, retry: false }]);
    expect(asked).toEqual([]);
  });

  test.each(['on-failure', 'on-request'] as const)(
    '%s: asks after a denial and retries unsandboxed',
    async (policy) => {
      const { result, attempts, asked } = await run(policy, ['approved']);
      expect(result).toBe('ran unsandboxed');
      expect(attempts).toEqual([
        { sandboxed: true, retry: false },
        { sandboxed: false, retry: true },
      ]);
      expect(asked).toEqual([
        expect.objectContaining({
          purpose: 'sandbox_retry',
          reason: 'command failed; retry without sandbox?',
        }),
      ]);
    },
  );

  test('a refused retry returns the denial (no second attempt)', async () => {
    for (const answer of ['denied', 'abort'] as const) {
      const { result, attempts } = await run('on-failure', [answer]);
      expect(UnifiedExecError.isUnifiedExecError(result) && result.kind).toBe('sandboxDenied');
      expect(attempts).toHaveLength(1);
    }
  });

  test('untrusted: asks before the first attempt, and that approval covers the retry', async () => {
    const { result, attempts, asked } = await run('untrusted', ['approved']);
    expect(result).toBe('ran unsandboxed');
    expect(attempts).toHaveLength(2);
    expect(asked.map((approval) => approval.purpose)).toEqual(['initial']);
  });

  test('untrusted: a refused command never runs and is `Rejected("rejected by user")`', async () => {
    const { result, attempts } = await run('untrusted', ['denied']);
    expect(UnifiedExecError.isUnifiedExecError(result) && result.debugText).toBe(
      'CreateProcess { message: "Rejected(\\"rejected by user\\")" }',
    );
    expect(attempts).toEqual([]);
  });

  test('require_escalated: asks with the justification, then runs unsandboxed first', async () => {
    const { result, attempts, asked } = await run('on-request', ['approved'], {
      sandboxPermissions: 'require_escalated',
      justification: 'needs the network',
    });
    expect(result).toBe('ran unsandboxed');
    expect(attempts).toEqual([{ sandboxed: false, retry: false }]);
    expect(asked).toEqual([expect.objectContaining({ purpose: 'initial', reason: 'needs the network' })]);
  });

  test('approved_for_session is remembered for the same command', async () => {
    const asked: ApprovalRequest[] = [];
    const orchestrator = new ToolOrchestrator({
      approvalPolicy: 'untrusted',
      approver: (approval) => {
        asked.push(approval);
        return 'approved_for_session';
      },
    });
    const attempt = async (): Promise<string> => 'ok';
    expect(await orchestrator.run(request, attempt)).toBe('ok');
    expect(await orchestrator.run(request, attempt)).toBe('ok');
    expect(await orchestrator.run({ ...request, command: ['other'] }, attempt)).toBe('ok');
    expect(asked).toHaveLength(2);
  });

  test('an approver that throws counts as denied; no approver denies', async () => {
    const throwing = new ToolOrchestrator({
      approvalPolicy: 'untrusted',
      approver: () => {
        throw new Error('no terminal');
      },
    });
    await expect(throwing.run(request, async () => 'ran')).rejects.toMatchObject({ kind: 'createProcess' });
    const none = new ToolOrchestrator({ approvalPolicy: 'untrusted' });
    await expect(none.run(request, async () => 'ran')).rejects.toMatchObject({ kind: 'createProcess' });
  });

  test('full access: never sandboxed, so a denial-looking failure is not retried', async () => {
    const { result, attempts } = await run('on-failure', ['approved'], { sandboxable: false });
    expect(result).toBe('ran unsandboxed');
    expect(attempts).toEqual([{ sandboxed: false, retry: false }]);
  });

  test('other attempt errors become `Rejected(<text>)` create-process errors', async () => {
    const orchestrator = new ToolOrchestrator({ approvalPolicy: 'never' });
    const error = await orchestrator
      .run(request, async () => {
        throw UnifiedExecError.createProcess('spawn failed: ENOENT');
      })
      .catch((thrown: unknown) => thrown);
    expect(UnifiedExecError.isUnifiedExecError(error) && error.debugText).toBe(
      'CreateProcess { message: "Rejected(\\"Failed to create unified exec process: spawn failed: ENOENT\\")" }',
    );
  });
});

describe('ToolOrchestrator.approveNetwork', () => {
  const target = { host: 'ask.test', port: 8080, protocol: 'http' };

  test('asks with the original reason; approved_for_session is remembered per host and port', async () => {
    const asked: ApprovalRequest[] = [];
    const orchestrator = new ToolOrchestrator({
      approvalPolicy: 'on-failure',
      approver: (approval) => {
        asked.push(approval);
        return 'approved_for_session';
      },
    });
    expect(await orchestrator.approveNetwork(request, target)).toBe(true);
    expect(await orchestrator.approveNetwork(request, target)).toBe(true);
    expect(await orchestrator.approveNetwork(request, { ...target, port: 8081 })).toBe(true);
    expect(asked).toEqual([
      expect.objectContaining({
        purpose: 'network',
        reason: 'Network access to "ask.test" is blocked by policy.',
        network: target,
      }),
      expect.objectContaining({ network: { ...target, port: 8081 } }),
    ]);
  });

  test('never: denied without asking; a denial is not remembered', async () => {
    const asked: ApprovalRequest[] = [];
    const never = new ToolOrchestrator({
      approvalPolicy: 'never',
      approver: (approval) => {
        asked.push(approval);
        return 'approved';
      },
    });
    expect(await never.approveNetwork(request, target)).toBe(false);
    expect(asked).toEqual([]);
    const answers: ApprovalDecision[] = ['denied', 'approved'];
    const asking = new ToolOrchestrator({
      approvalPolicy: 'untrusted',
      approver: () => answers.shift() ?? 'denied',
    });
    expect(await asking.approveNetwork(request, target)).toBe(false);
    expect(await asking.approveNetwork(request, target)).toBe(true);
  });
});
