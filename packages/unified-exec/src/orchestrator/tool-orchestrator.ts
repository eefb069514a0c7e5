import type { Logger } from '@execd/protocol';
import { UnifiedExecError } from '../errors.ts';
import { loadBashParser, UNPARSED_SCRIPTS } from '../exec-policy/bash-parser.ts';
import { type ExecApprovalRequirement, ExecPolicyManager } from '../exec-policy/exec-policy-manager.ts';
import { canonicalCommandForApproval } from '../exec-policy/shell-commands.ts';
import { abortable } from '../internal/abortable.ts';
import type { AdditionalPermissions, SandboxPermissions } from '../tools/exec-command-args.ts';
import type { ApprovalPolicy } from '../tools/exec-command-policy.ts';
import { rustDebugString } from '../tools/rust-format.ts';
import {
  type ApprovalDecision,
  type ApprovalPurpose,
  type ApprovalRequest,
  type Approver,
  DENY_ALL_APPROVER,
  type NetworkApprovalTarget,
  networkApprovalReason,
  REJECTED_BY_USER,
  SANDBOX_RETRY_REASON,
  wantsNoSandboxApproval,
} from './approval.ts';
import {
  EMPTY_GRANT,
  grantCovers,
  grantFromAdditionalPermissions,
  grantToAdditionalPermissions,
  mergeGrants,
  type PermissionGrant,
} from './permission-grants.ts';

/** Options of a ToolOrchestrator. */
export interface ToolOrchestratorOptions {
  /** When to ask (default `on-request`). */
  readonly approvalPolicy?: ApprovalPolicy | undefined;
  /** Who answers (default: deny everything). */
  readonly approver?: Approver | undefined;
  /** Prefix rules and command heuristics (default: no rules). */
  readonly execPolicy?: ExecPolicyManager | undefined;
  readonly logger?: Logger | undefined;
}

/** The command an orchestration is about. */
export interface OrchestratorRequest {
  readonly callId: string;
  readonly processId: number;
  readonly command: readonly string[];
  readonly cwd: string;
  readonly environmentId: string;
  /** Whether it runs on a terminal (part of what an `approved_for_session` answer covers). */
  readonly tty?: boolean | undefined;
  /** The model's per-command override. */
  readonly sandboxPermissions: SandboxPermissions;
  /** The model's reason for `require_escalated`. */
  readonly justification?: string | undefined;
  /** False when the environment's permission profile confines nothing (full access). */
  readonly sandboxable: boolean;
  /** False for a full-access file system (default: `sandboxable`); decides what is asked. */
  readonly fileSystemRestricted?: boolean | undefined;
  /** The model's `prefix_rule`: offered to the Approver as a rule to keep. */
  readonly prefixRule?: readonly string[] | undefined;
  /** The model's `additional_permissions` (with `with_additional_permissions`). */
  readonly additionalPermissions?: AdditionalPermissions | undefined;
  /** Aborts a pending approval question (the call was cancelled). */
  readonly cancelSignal?: AbortSignal | undefined;
}

/** One attempt to run: under the environment's sandbox, or without it. */
export interface SandboxAttempt {
  readonly sandboxed: boolean;
  /** True for the retry after a sandbox denial (backend ids get a fresh suffix). */
  readonly retry: boolean;
  /** Extra access granted for this attempt only (`with_additional_permissions`). */
  readonly grant?: PermissionGrant | undefined;
}

/**
 * Approval, sandbox selection, first attempt and retry (the original's `ToolOrchestrator`, spec
 * §5.1): asks the host's Approver when the policy requires it; runs the first attempt in the
 * sandbox unless escalation was approved; when that attempt is refused by the sandbox and the
 * policy allows it (anything but `never`), asks again (unless already approved) and retries
 * unsandboxed. Errors come out as UnifiedExecErrors: `sandboxDenied` for a refused command
 * that is not retried, `createProcess` (`Rejected(…)` as the original's Debug text) otherwise.
 */
export class ToolOrchestrator {
  readonly #policy: ApprovalPolicy;
  readonly #approver: Approver;
  readonly #logger: Logger | undefined;
  // Exact commands approved for the session (`approved_for_session`): not asked again. Keyed as
  // the original's approval cache: canonical argv, cwd, tty, sandbox override, extra permissions.
  readonly #sessionApprovals = new Set<string>();
  // Hosts approved for the session (`approved_for_session` of a network approval), per environment.
  readonly #sessionHosts = new Set<string>();
  readonly #execPolicy: ExecPolicyManager;
  // Extra permissions granted for the session, per environment (`approved_for_session`).
  readonly #sessionGrants = new Map<string, PermissionGrant>();

  constructor(options: ToolOrchestratorOptions = {}) {
    this.#policy = options.approvalPolicy ?? 'on-request';
    this.#approver = options.approver ?? DENY_ALL_APPROVER;
    this.#execPolicy = options.execPolicy ?? new ExecPolicyManager();
    this.#logger = options.logger;
  }

  /** The session's exec policy (rules plus approved prefixes). */
  get execPolicy(): ExecPolicyManager {
    return this.#execPolicy;
  }

  /** The approval policy in force. */
  get approvalPolicy(): ApprovalPolicy {
    return this.#policy;
  }

  /** Runs `attempt` under the policy; see the class comment. */
  async run<T>(request: OrchestratorRequest, attempt: (attempt: SandboxAttempt) => Promise<T>): Promise<T> {
    const escalated = request.sandboxPermissions === 'require_escalated';
    const key = await approvalKey(request);
    const requirement = await this.#execPolicy.requirementFor({
      command: request.command,
      approvalPolicy: this.#policy,
      fileSystemRestricted: request.fileSystemRestricted ?? request.sandboxable,
      sandboxPermissions: request.sandboxPermissions,
      prefixRule: request.prefixRule,
    });
    if (requirement.type === 'forbidden') throw UnifiedExecError.policyRejected(requirement.reason);
    // Extra permissions: what the model asks for, and whether the session already granted it.
    const sessionGrant = this.#sessionGrants.get(request.environmentId) ?? EMPTY_GRANT;
    const asked =
      request.sandboxPermissions === 'with_additional_permissions' &&
      request.additionalPermissions !== undefined
        ? grantFromAdditionalPermissions(request.additionalPermissions, request.cwd)
        : undefined;
    const preapproved = asked !== undefined && grantCovers(sessionGrant, asked);
    let approved = false;
    if (requirement.type === 'needsApproval' && !preapproved) {
      await this.#requireApproval(request, key, requirement, asked);
      approved = true;
    }
    // Session grants are sticky (the original's `implicit_granted_permissions`): a default
    // request runs with them too; an explicit request adds its own.
    const sticky = this.#sessionGrants.get(request.environmentId);
    const grant =
      asked === undefined
        ? request.sandboxPermissions === 'use_default'
          ? sticky
          : undefined
        : preapproved
          ? mergeGrants(sessionGrant, asked)
          : asked;
    const bypass = escalated || (requirement.type === 'skip' && requirement.bypassSandbox);
    const sandboxed = request.sandboxable && !bypass;
    try {
      return await attempt({ sandboxed, retry: false, ...(grant === undefined ? {} : { grant }) });
    } catch (error) {
      if (!sandboxed || !isSandboxDenied(error) || !wantsNoSandboxApproval(this.#policy)) {
        throw asOrchestratorError(error);
      }
      this.#logger?.debug('unified-exec: sandbox denied the command', { processId: request.processId });
      // An approval covers the unsandboxed retry, except one for extra permissions: that was
      // for exactly those permissions, not for leaving the sandbox.
      const covered = (approved && grant === undefined) || this.#sessionApprovals.has(key);
      if (!covered) {
        const amendment = requirement.type === 'skip' ? requirement.proposedAmendment : undefined;
        const decision = await this.#decide(request, 'sandbox_retry', SANDBOX_RETRY_REASON, undefined, {
          proposedExecpolicyAmendment: amendment,
        });
        // A refused retry answers with what the sandbox refused (the model sees the denial).
        if (!isApproval(decision)) throw error;
        await this.#remember(request, key, decision, amendment, undefined);
      }
    }
    try {
      return await attempt({ sandboxed: false, retry: true });
    } catch (error) {
      throw asOrchestratorError(error);
    }
  }

  /**
   * Decides a managed-network question about a host no pattern covers (the executor's
   * `network/policyRequest`): never asked under `never` (denied), remembered per environment and
   * `host:port` after `approved_for_session`. True allows the connection.
   */
  async approveNetwork(request: OrchestratorRequest, target: NetworkApprovalTarget): Promise<boolean> {
    const key = JSON.stringify([request.environmentId, target.host, target.port]);
    if (this.#sessionHosts.has(key)) return true;
    if (this.#policy === 'never') return false;
    const decision = await this.#decide(request, 'network', networkApprovalReason(target.host), target);
    if (decision === 'approved_for_session') this.#sessionHosts.add(key);
    return isApproval(decision);
  }

  async #requireApproval(
    request: OrchestratorRequest,
    key: string,
    requirement: Extract<ExecApprovalRequirement, { type: 'needsApproval' }>,
    asked: PermissionGrant | undefined,
  ): Promise<void> {
    if (asked === undefined && this.#sessionApprovals.has(key)) return;
    const reason = requirement.reason ?? request.justification;
    const decision = await this.#decide(request, 'initial', reason, undefined, {
      proposedExecpolicyAmendment: requirement.proposedAmendment,
      additionalPermissions: asked === undefined ? undefined : grantToAdditionalPermissions(asked),
    });
    if (!isApproval(decision)) throw rejected(REJECTED_BY_USER);
    await this.#remember(request, key, decision, requirement.proposedAmendment, asked);
  }

  // What an approval leaves behind: the exact command (or its extra permissions) for the session,
  // or ("always") the offered prefix as a rule of the session and a line of the rules file.
  async #remember(
    request: OrchestratorRequest,
    key: string,
    decision: ApprovalDecision,
    amendment: readonly string[] | undefined,
    asked: PermissionGrant | undefined,
  ): Promise<void> {
    if (decision === 'approved_for_session') {
      // A grant is remembered as a grant; the command itself is not approved to leave the sandbox.
      if (asked === undefined) this.#sessionApprovals.add(key);
      else {
        const granted = this.#sessionGrants.get(request.environmentId) ?? EMPTY_GRANT;
        this.#sessionGrants.set(request.environmentId, mergeGrants(granted, asked));
      }
    }
    // Only "always" adopts the offered prefix (as the original: a session answer keeps the command).
    if (amendment !== undefined && decision === 'approved_execpolicy_amendment') {
      try {
        await this.#execPolicy.addAllowPrefix(amendment, { persist: true });
      } catch (error) {
        // The command was approved; failing to record the rule does not undo that.
        this.#logger?.warn('unified-exec: could not record the approved prefix rule', { error });
      }
    }
  }

  async #decide(
    request: OrchestratorRequest,
    purpose: ApprovalPurpose,
    reason?: string,
    network?: NetworkApprovalTarget,
    extra: Pick<ApprovalRequest, 'proposedExecpolicyAmendment' | 'additionalPermissions'> = {},
  ): Promise<ApprovalDecision> {
    try {
      const question = this.#approver({
        callId: request.callId,
        processId: request.processId,
        command: request.command,
        cwd: request.cwd,
        environmentId: request.environmentId,
        purpose,
        reason,
        ...(network === undefined ? {} : { network }),
        ...(extra.proposedExecpolicyAmendment === undefined
          ? {}
          : { proposedExecpolicyAmendment: extra.proposedExecpolicyAmendment }),
        ...(extra.additionalPermissions === undefined
          ? {}
          : { additionalPermissions: extra.additionalPermissions }),
      });
      const decision = await abortable(Promise.resolve(question), request.cancelSignal);
      this.#logger?.debug('unified-exec: approval decision', {
        purpose,
        decision,
        processId: request.processId,
      });
      return decision;
    } catch (error) {
      if (request.cancelSignal?.aborted) throw error;
      this.#logger?.warn('unified-exec: approver threw; treating it as denied', { error });
      return 'denied';
    }
  }
}

function isApproval(decision: ApprovalDecision): boolean {
  return (
    decision === 'approved' ||
    decision === 'approved_for_session' ||
    decision === 'approved_execpolicy_amendment'
  );
}

async function approvalKey(request: OrchestratorRequest): Promise<string> {
  const parser = await loadBashParser().catch(() => UNPARSED_SCRIPTS);
  return JSON.stringify([
    request.environmentId,
    canonicalCommandForApproval(parser, request.command),
    request.cwd,
    request.tty ?? false,
    request.sandboxPermissions,
    request.additionalPermissions ?? null,
  ]);
}

function isSandboxDenied(error: unknown): error is UnifiedExecError {
  return UnifiedExecError.isUnifiedExecError(error) && error.kind === 'sandboxDenied';
}

function rejected(reason: string): UnifiedExecError {
  return UnifiedExecError.createProcess(`Rejected(${rustDebugString(reason)})`);
}

/** Sandbox denials pass through; anything else becomes `Rejected(<its Display text>)`. */
function asOrchestratorError(error: unknown): unknown {
  if (isSandboxDenied(error)) return error;
  const text = error instanceof Error ? error.message : String(error);
  return UnifiedExecError.createProcess(`Rejected(${rustDebugString(text)})`, error);
}
