import type { AdditionalPermissions, ExecCommandArgs, SandboxPermissions } from './exec-command-args.ts';

/** When the user is asked to approve commands (the original's `AskForApproval`). */
export type ApprovalPolicy = 'untrusted' | 'on-failure' | 'on-request' | 'never';

/** Configuration that decides which `exec_command` requests are acceptable. */
export interface ExecCommandPolicyOptions {
  /** `login: true` is refused when false (and `login` is hidden from the schema). Default true. */
  readonly allowLoginShell?: boolean;
  /** Escalation and extra permissions can only be asked for under `on-request`. Default `on-request`. */
  readonly approvalPolicy?: ApprovalPolicy;
  /** The `exec_permission_approvals` feature: enables `with_additional_permissions`. Default false. */
  readonly execPermissionApprovals?: boolean;
}

/** Rust `Debug` names of the approval policies, as the original prints them in errors. */
const APPROVAL_POLICY_DEBUG: Record<ApprovalPolicy, string> = {
  untrusted: 'UnlessTrusted',
  'on-failure': 'OnFailure',
  'on-request': 'OnRequest',
  never: 'Never',
};

/** Text for `justification` given without an explicit `sandbox_permissions`. */
export const JUSTIFICATION_WITHOUT_SANDBOX_PERMISSIONS_MESSAGE: string =
  '`justification` requires an explicit `sandbox_permissions`; use `sandbox_permissions: "require_escalated"` for unsandboxed execution, or omit `justification`.';

/** Text for `login: true` when login shells are disabled. */
export const LOGIN_SHELL_DISABLED_MESSAGE: string =
  'login shell is disabled by config; omit `login` or set it to false.';

/** Text for an escalation request under a policy that cannot prompt. */
export function escalationRejectedMessage(policy: ApprovalPolicy): string {
  const name = APPROVAL_POLICY_DEBUG[policy];
  return `approval policy is ${name}; reject command — you cannot ask for escalated permissions if the approval policy is ${name}`;
}

/**
 * The sandbox override a call asks for, normalised as the original: inline
 * `additional_permissions` turn a default request into `with_additional_permissions`.
 */
export function effectiveSandboxPermissions(
  args: Pick<ExecCommandArgs, 'sandbox_permissions' | 'additional_permissions'>,
): SandboxPermissions {
  return args.additional_permissions !== undefined && args.sandbox_permissions === 'use_default'
    ? 'with_additional_permissions'
    : args.sandbox_permissions;
}

/**
 * The original's checks after argument decoding, in its order: justification, login shell,
 * escalation under the approval policy, then the additional-permissions rules. Returns the
 * text for the model, or undefined when the request may proceed. `sandboxPermissionsGiven`
 * tells an explicit `use_default` from an omitted one (only the latter makes `justification` an
 * error).
 */
export function validateExecCommandPolicy(
  args: ExecCommandArgs,
  options: ExecCommandPolicyOptions = {},
  sandboxPermissionsGiven: boolean = args.sandbox_permissions !== 'use_default',
): string | undefined {
  const approvalPolicy = options.approvalPolicy ?? 'on-request';
  if (args.justification !== undefined && !sandboxPermissionsGiven) {
    return JUSTIFICATION_WITHOUT_SANDBOX_PERMISSIONS_MESSAGE;
  }
  if (args.login === true && options.allowLoginShell === false) return LOGIN_SHELL_DISABLED_MESSAGE;

  const requested = effectiveSandboxPermissions(args);
  if (requested !== 'use_default' && approvalPolicy !== 'on-request') {
    return escalationRejectedMessage(approvalPolicy);
  }
  const usesAdditional = requested === 'with_additional_permissions';
  if (!options.execPermissionApprovals && (usesAdditional || args.additional_permissions !== undefined)) {
    return 'additional permissions are disabled; enable `features.exec_permission_approvals` before using `with_additional_permissions`';
  }
  if (usesAdditional) {
    if (args.additional_permissions === undefined) {
      return 'missing `additional_permissions`; provide at least one of `network` or `file_system` when using `with_additional_permissions`';
    }
    if (!requestsAnything(args.additional_permissions)) {
      return '`additional_permissions` must include at least one requested permission in `network` or `file_system`';
    }
    return undefined;
  }
  if (args.additional_permissions !== undefined) {
    return '`additional_permissions` requires `sandbox_permissions` set to `with_additional_permissions`';
  }
  return undefined;
}

function requestsAnything(permissions: AdditionalPermissions): boolean {
  const fs = permissions.file_system;
  return permissions.network?.enabled === true || (fs?.read?.length ?? 0) > 0 || (fs?.write?.length ?? 0) > 0;
}
