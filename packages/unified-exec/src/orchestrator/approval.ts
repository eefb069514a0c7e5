import type { AdditionalPermissions } from '../tools/exec-command-args.ts';
import type { ApprovalPolicy } from '../tools/exec-command-policy.ts';

/**
 * What the host answers to an approval request (the original's `ReviewDecision`, reduced):
 * `approved` runs this command once; `approved_for_session` also remembers it (and the offered
 * prefix rule, and extra permissions) for the session; `approved_execpolicy_amendment` ("always")
 * runs it and appends the offered prefix rule to `<codexHome>/rules/default.rules`.
 */
export type ApprovalDecision =
  | 'approved'
  | 'approved_for_session'
  | 'approved_execpolicy_amendment'
  | 'denied'
  | 'abort';

/**
 * Why approval is asked: before the first attempt, to retry without the sandbox after a denial,
 * or (managed network) to let a running command reach a host no allow/deny pattern covers.
 */
export type ApprovalPurpose = 'initial' | 'sandbox_retry' | 'network';

/** The connection a `network` approval is about. */
export interface NetworkApprovalTarget {
  readonly host: string;
  readonly port: number;
  /** `http`, `https_connect` or `socks5_tcp`. */
  readonly protocol: string;
}

/**
 * One question to the person (or policy engine) behind the host. `command`, `cwd`, `reason` and
 * `network.host` are chosen by the model: show them through `visibleText` (as the terminal and
 * MCP approvers do), never raw.
 */
export interface ApprovalRequest {
  /** The tool call this command belongs to. */
  readonly callId: string;
  /** The unified process id reserved for it. */
  readonly processId: number;
  /** The argv that would run (shell included). */
  readonly command: readonly string[];
  /** The command's working directory. */
  readonly cwd: string;
  /** The environment it runs in. */
  readonly environmentId: string;
  readonly purpose: ApprovalPurpose;
  /**
   * The model's justification (initial escalation), `command failed; retry without sandbox?`, or
   * `Network access to "host" is blocked by policy.`.
   */
  readonly reason: string | undefined;
  /** For `network`: the connection the command attempts. */
  readonly network?: NetworkApprovalTarget | undefined;
  /**
   * The command prefix the user may allow for good (the model's `prefix_rule`, or one derived
   * from the command); `approved_execpolicy_amendment` / `approved_for_session` adopt it.
   */
  readonly proposedExecpolicyAmendment?: readonly string[] | undefined;
  /** For `with_additional_permissions`: the extra access asked for (absolute paths). */
  readonly additionalPermissions?: AdditionalPermissions | undefined;
}

/**
 * Decides approval requests; supplied by the host (a terminal prompt, an MCP elicitation, a
 * policy engine). Throwing counts as `denied`.
 */
export type Approver = (request: ApprovalRequest) => ApprovalDecision | Promise<ApprovalDecision>;

/** The approver used when the host supplies none: every request is denied. */
export const DENY_ALL_APPROVER: Approver = () => 'denied';

/** The retry reason the original shows after a sandbox denial. */
export const SANDBOX_RETRY_REASON = 'command failed; retry without sandbox?';

/** The rejection text when approval is denied or aborted (as the original). */
export const REJECTED_BY_USER = 'rejected by user';

/** The question of a `network` approval (the original's retry reason for a blocked host). */
export function networkApprovalReason(host: string): string {
  return `Network access to "${host}" is blocked by policy.`;
}

/** Whether a denial under this policy may be retried without the sandbox after asking. */
export function wantsNoSandboxApproval(policy: ApprovalPolicy): boolean {
  return policy !== 'never';
}

/**
 * The answers a person is offered for a request (the original's `default_available_decisions`):
 * a network question also offers `approved_for_session` (that host for the session); extra
 * permissions only yes or no; a command offers `approved_execpolicy_amendment` ("don't ask again
 * for commands that start with …") when a prefix is proposed. `abort` is the refusal.
 */
export function availableDecisions(request: ApprovalRequest): ApprovalDecision[] {
  if (request.purpose === 'network') return ['approved', 'approved_for_session', 'abort'];
  if (request.additionalPermissions !== undefined) return ['approved', 'abort'];
  const amendment = request.proposedExecpolicyAmendment;
  return amendment !== undefined && amendment.length > 0
    ? ['approved', 'approved_execpolicy_amendment', 'abort']
    : ['approved', 'abort'];
}

/** The "always" answer a request offers (see {@link availableDecisions}), if any. */
export function alwaysDecision(request: ApprovalRequest): ApprovalDecision | undefined {
  return availableDecisions(request).find(
    (decision) => decision === 'approved_for_session' || decision === 'approved_execpolicy_amendment',
  );
}
