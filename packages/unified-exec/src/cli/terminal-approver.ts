import { shlexJoin } from '../internal/shlex.ts';
import type { ApprovalDecision, ApprovalRequest, Approver } from '../orchestrator/approval.ts';
import { visibleText } from '../orchestrator/visible-text.ts';

/**
 * The question printed for an approval request. What the model chose (command, cwd, reason) is
 * shown through {@link visibleText}, so escape sequences, carriage returns or bidi overrides in it
 * cannot redraw or reorder what the person approves.
 */
export function approvalQuestion(request: ApprovalRequest): string {
  const what =
    request.purpose === 'sandbox_retry' ? 'The sandbox refused it. Retry without the sandbox' : 'Run';
  const reason = request.reason === undefined ? '' : `\n  reason: ${visibleText(request.reason)}`;
  const command = visibleText(shlexJoin(request.command));
  return `\n${what}: ${command}\n  in ${visibleText(request.cwd)}${reason}\n[y]es / [a]lways / [N]o? `;
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
