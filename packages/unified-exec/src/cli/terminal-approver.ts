import { shlexJoin } from '../internal/shlex.ts';
import type { ApprovalDecision, ApprovalRequest, Approver } from '../orchestrator/approval.ts';

/** The question printed for an approval request. */
export function approvalQuestion(request: ApprovalRequest): string {
  const what =
    request.purpose === 'sandbox_retry' ? 'The sandbox refused it. Retry without the sandbox' : 'Run';
  const reason = request.reason === undefined ? '' : `\n  reason: ${request.reason}`;
  return `\n${what}: ${shlexJoin(request.command)}\n  in ${request.cwd}${reason}\n[y]es / [a]lways / [N]o? `;
}

/** Reads an answer: `y`/`yes` approves, `a`/`always` approves for the session, anything else denies. */
export function decisionOf(answer: string): ApprovalDecision {
  const normalized = answer.trim().toLowerCase();
  if (normalized === 'y' || normalized === 'yes') return 'approved';
  if (normalized === 'a' || normalized === 'always') return 'approved_for_session';
  return 'denied';
}

/** An Approver that asks a person through `ask` (a readline question); without one it denies. */
export function terminalApprover(
  ask: (() => ((question: string) => Promise<string>) | undefined) | undefined,
): Approver {
  return async (request) => {
    const question = ask?.();
    if (question === undefined) return 'denied';
    return decisionOf(await question(approvalQuestion(request)));
  };
}
