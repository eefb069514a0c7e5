import {
  type ApprovalDecision,
  type ApprovalRequest,
  type Approver,
  alwaysDecision,
  shlexJoin,
  visibleText,
} from '@execd/unified-exec';

/**
 * What `[a]lways` means for a request, as the original words its option: the offered prefix
 * becomes a rule, or (a network question) the host is allowed for the session. Undefined when the
 * request offers no such answer.
 */
export function alwaysLabel(request: ApprovalRequest): string | undefined {
  const always = alwaysDecision(request);
  if (always === 'approved_for_session') return "don't ask again for this host in this session";
  if (always === 'approved_execpolicy_amendment') {
    const prefix = visibleText(shlexJoin(request.proposedExecpolicyAmendment ?? []));
    return `don't ask again for commands that start with \`${prefix}\``;
  }
  return undefined;
}

/**
 * The question printed for an approval request. What the model chose (command, cwd, reason, the
 * offered prefix) is shown through {@link visibleText}, so escape sequences, carriage returns or
 * bidi overrides in it cannot redraw or reorder what the person approves.
 */
export function approvalQuestion(request: ApprovalRequest): string {
  const what =
    request.purpose === 'sandbox_retry'
      ? 'The sandbox refused it. Retry without the sandbox'
      : request.purpose === 'network'
        ? `Allow network access to ${visibleText(request.network?.host ?? '')} for`
        : 'Run';
  const reason = request.reason === undefined ? '' : `\n  reason: ${visibleText(request.reason)}`;
  const command = visibleText(shlexJoin(request.command));
  const always = alwaysLabel(request);
  const choices = always === undefined ? '[y]es / [N]o? ' : `[y]es / [a]lways: ${always} / [N]o? `;
  return `\n${what}: ${command}\n  in ${visibleText(request.cwd)}${reason}\n${choices}`;
}

/**
 * Reads an answer: `y`/`yes` approves once; `a`/`always` (or `p`, the original's key for the
 * prefix option) gives the request's "always" answer when it offers one; anything else denies.
 */
export function decisionOf(answer: string, request?: ApprovalRequest): ApprovalDecision {
  const normalized = answer.trim().toLowerCase();
  if (normalized === 'y' || normalized === 'yes') return 'approved';
  if (normalized === 'a' || normalized === 'always' || normalized === 'p') {
    return (request === undefined ? undefined : alwaysDecision(request)) ?? 'denied';
  }
  return 'denied';
}

/** An Approver that asks a person through `ask` (a readline question); without one it denies. */
export function terminalApprover(
  ask: (() => ((question: string) => Promise<string>) | undefined) | undefined,
): Approver {
  return async (request) => {
    const question = ask?.();
    if (question === undefined) return 'denied';
    return decisionOf(await question(approvalQuestion(request)), request);
  };
}
