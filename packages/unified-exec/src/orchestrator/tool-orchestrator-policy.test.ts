import { describe, expect, test } from 'vitest';
import { UnifiedExecError } from '../errors.ts';
import { ExecPolicyManager } from '../exec-policy/exec-policy-manager.ts';
import { ExecPolicy } from '../exec-policy/policy.ts';
import type { ApprovalDecision, ApprovalRequest } from './approval.ts';
import { type OrchestratorRequest, type SandboxAttempt, ToolOrchestrator } from './tool-orchestrator.ts';

const base: OrchestratorRequest = {
  callId: 'call-1',
  processId: 1000,
  command: ['/bin/bash', '-lc', 'git push origin main'],
  cwd: '/work',
  environmentId: 'local',
  sandboxPermissions: 'use_default',
  sandboxable: true,
};

function orchestrator(
  policy: 'never' | 'on-failure' | 'on-request' | 'untrusted',
  rules: ExecPolicy,
  answers: (request: ApprovalRequest) => ApprovalDecision = () => 'approved',
) {
  const asked: ApprovalRequest[] = [];
  const attempts: SandboxAttempt[] = [];
  const instance = new ToolOrchestrator({
    approvalPolicy: policy,
    execPolicy: new ExecPolicyManager({ policy: rules }),
    approver: (request) => {
      asked.push(request);
      return answers(request);
    },
  });
  const run = (request: Partial<OrchestratorRequest> = {}, deny = false) =>
    instance
      .run({ ...base, ...request }, async (attempt) => {
        attempts.push(attempt);
        if (deny && attempt.sandboxed) {
          throw UnifiedExecError.sandboxDenied('denied', { exitCode: 1, text: 'Read-only file system\n' });
        }
        return 'ran';
      })
      .catch((error: unknown) => error);
  return { asked, attempts, run };
}

const rules = (...list: [string[], 'allow' | 'prompt' | 'forbidden'][]) =>
  list.reduce((policy, [prefix, decision]) => policy.withPrefixRule(prefix, decision), new ExecPolicy());

describe('ToolOrchestrator with an exec policy', () => {
  test('a forbidden rule refuses before asking or running, flagged as a policy rejection', async () => {
    const { asked, attempts, run } = orchestrator('on-request', rules([['git', 'push'], 'forbidden']));
    const error = await run();
    expect(UnifiedExecError.isUnifiedExecError(error) && error.rejectedByPolicy).toBe(true);
    expect((error as UnifiedExecError).debugText).toBe(
      'CreateProcess { message: "Rejected(\\"`/bin/bash -lc \'git push origin main\'` rejected: policy forbids commands starting with `git push`\\")" }',
    );
    expect(asked).toEqual([]);
    expect(attempts).toEqual([]);
  });

  test('an allow rule for every command skips the question and the sandbox, even under untrusted', async () => {
    const { asked, attempts, run } = orchestrator('untrusted', rules([['git'], 'allow']));
    expect(await run()).toBe('ran');
    expect(asked).toEqual([]);
    expect(attempts).toEqual([{ sandboxed: false, retry: false }]);
  });

  test('one command of a script without a rule keeps the sandbox', async () => {
    const { attempts, run } = orchestrator('on-request', rules([['git'], 'allow']));
    expect(await run({ command: ['/bin/bash', '-lc', 'git status && touch x'] })).toBe('ran');
    expect(attempts).toEqual([{ sandboxed: true, retry: false }]);
  });

  test('a prompt rule under never is refused with the original reason', async () => {
    const { run } = orchestrator('never', rules([['git'], 'prompt']));
    const error = await run();
    expect((error as UnifiedExecError).detail).toBe(
      'Rejected("approval required by policy, but AskForApproval is set to Never")',
    );
  });

  test('approving extra permissions does not approve leaving the sandbox after a denial', async () => {
    const { asked, attempts, run } = orchestrator('on-request', new ExecPolicy(), (request) =>
      request.purpose === 'initial' ? 'approved' : 'denied',
    );
    const error = await run(
      {
        command: ['/bin/bash', '-lc', 'touch /data/x'],
        sandboxPermissions: 'with_additional_permissions',
        additionalPermissions: { file_system: { write: ['/data'] } },
      },
      true,
    );
    expect(UnifiedExecError.isUnifiedExecError(error) && error.kind).toBe('sandboxDenied');
    expect(attempts).toEqual([
      { sandboxed: true, retry: false, grant: { network: false, read: [], write: ['/data'] } },
    ]);
    expect(asked.map((request) => request.purpose)).toEqual(['initial', 'sandbox_retry']);
  });
});
