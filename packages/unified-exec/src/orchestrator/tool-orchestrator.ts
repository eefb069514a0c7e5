import type { Logger } from '@execd/protocol';
import { UnifiedExecError } from '../errors.ts';
import type { SandboxPermissions } from '../tools/exec-command-args.ts';
import type { ApprovalPolicy } from '../tools/exec-command-policy.ts';
import { rustDebugString } from '../tools/rust-format.ts';
import {
  type ApprovalDecision,
  type ApprovalPurpose,
  type Approver,
  DENY_ALL_APPROVER,
  type NetworkApprovalTarget,
  needsInitialApproval,
  networkApprovalReason,
  REJECTED_BY_USER,
  SANDBOX_RETRY_REASON,
  wantsNoSandboxApproval,
} from './approval.ts';

/** Options of a ToolOrchestrator. */
export interface ToolOrchestratorOptions {
  /** When to ask (default `on-request`). */
  readonly approvalPolicy?: ApprovalPolicy | undefined;
  /** Who answers (default: deny everything). */
  readonly approver?: Approver | undefined;
  readonly logger?: Logger | undefined;
}

/** The command an orchestration is about. */
export interface OrchestratorRequest {
  readonly callId: string;
  readonly processId: number;
  readonly command: readonly string[];
  readonly cwd: string;
  readonly environmentId: string;
  /** The model's per-command override. */
  readonly sandboxPermissions: SandboxPermissions;
  /** The model's reason for `require_escalated`. */
  readonly justification?: string | undefined;
  /** False when the environment's permission profile confines nothing (full access). */
  readonly sandboxable: boolean;
}

/** One attempt to run: under the environment's sandbox, or without it. */
export interface SandboxAttempt {
  readonly sandboxed: boolean;
  /** True for the retry after a sandbox denial (backend ids get a fresh suffix). */
  readonly retry: boolean;
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
  // Commands approved for the session (`approved_for_session`): not asked again.
  readonly #sessionApprovals = new Set<string>();
  // Hosts approved for the session (`approved_for_session` of a network approval), per environment.
  readonly #sessionHosts = new Set<string>();

  constructor(options: ToolOrchestratorOptions = {}) {
    this.#policy = options.approvalPolicy ?? 'on-request';
    this.#approver = options.approver ?? DENY_ALL_APPROVER;
    this.#logger = options.logger;
  }

  /** The approval policy in force. */
  get approvalPolicy(): ApprovalPolicy {
    return this.#policy;
  }

  /** Runs `attempt` under the policy; see the class comment. */
  async run<T>(request: OrchestratorRequest, attempt: (attempt: SandboxAttempt) => Promise<T>): Promise<T> {
    const escalated = request.sandboxPermissions === 'require_escalated';
    let approved = false;
    if (needsInitialApproval(this.#policy, escalated)) {
      await this.#requireApproval(request, 'initial', escalated ? request.justification : undefined);
      approved = true;
    }
    const sandboxed = request.sandboxable && !escalated;
    try {
      return await attempt({ sandboxed, retry: false });
    } catch (error) {
      if (!sandboxed || !isSandboxDenied(error) || !wantsNoSandboxApproval(this.#policy)) {
        throw asOrchestratorError(error);
      }
      this.#logger?.debug('unified-exec: sandbox denied the command', { processId: request.processId });
      if (!approved && !this.#sessionApprovals.has(approvalKey(request))) {
        const decision = await this.#decide(request, 'sandbox_retry', SANDBOX_RETRY_REASON);
        // A refused retry answers with what the sandbox refused (the model sees the denial).
        if (!isApproval(decision)) throw error;
        if (decision === 'approved_for_session') this.#sessionApprovals.add(approvalKey(request));
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
    purpose: ApprovalPurpose,
    reason?: string,
  ): Promise<void> {
    if (this.#sessionApprovals.has(approvalKey(request))) return;
    const decision = await this.#decide(request, purpose, reason);
    if (!isApproval(decision)) throw rejected(REJECTED_BY_USER);
    if (decision === 'approved_for_session') this.#sessionApprovals.add(approvalKey(request));
  }

  async #decide(
    request: OrchestratorRequest,
    purpose: ApprovalPurpose,
    reason?: string,
    network?: NetworkApprovalTarget,
  ): Promise<ApprovalDecision> {
    try {
      const decision = await this.#approver({
        callId: request.callId,
        processId: request.processId,
        command: request.command,
        cwd: request.cwd,
        environmentId: request.environmentId,
        purpose,
        reason,
        ...(network === undefined ? {} : { network }),
      });
      this.#logger?.debug('unified-exec: approval decision', {
        purpose,
        decision,
        processId: request.processId,
      });
      return decision;
    } catch (error) {
      this.#logger?.warn('unified-exec: approver threw; treating it as denied', { error });
      return 'denied';
    }
  }
}

function isApproval(decision: ApprovalDecision): boolean {
  return decision === 'approved' || decision === 'approved_for_session';
}

function approvalKey(request: OrchestratorRequest): string {
  return JSON.stringify([request.environmentId, request.cwd, request.command]);
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
