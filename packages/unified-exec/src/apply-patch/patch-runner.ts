import { performance } from 'node:perf_hooks';
import { resolveSandboxPolicy } from '@execd/sandboxing';
import type { Environment } from '../environment/environment.ts';
import {
  type Approver,
  DENY_ALL_APPROVER,
  REJECTED_BY_USER,
  SANDBOX_RETRY_REASON,
} from '../orchestrator/approval.ts';
import { sandboxContextFor, sandboxForPeer } from '../runtime/launch.ts';
import type { ApprovalPolicy } from '../tools/exec-command-policy.ts';
import { applyVerifiedPatch, formatPatchResult, type PatchApplyResult } from './apply.ts';
import { BackendPatchFileSystem } from './backend-patch-fs.ts';
import { type ExecFileSystemLike, ExecFileSystemPatchAdapter } from './exec-fs-adapter.ts';
import { LocalPatchFileSystem } from './local-patch-fs.ts';
import type { ParsedPatch } from './parser.ts';
import type { PatchFileSystem } from './patch-fs.ts';
import { assessPatchSafety } from './safety.ts';
import { PatchVerificationError, type VerifiedPatch, verifyPatch } from './verify.ts';

/** Prefix of every verification failure text. */
export const VERIFICATION_FAILED_PREFIX = 'apply_patch verification failed: ';

/** Text of a patch the Approver refused (the orchestrator's rejection, as for commands). */
export const PATCH_REJECTED_BY_USER: string = REJECTED_BY_USER;

/** What applying a patch answers: the tool text, and whether it is a success (`Exit code: …`). */
export interface PatchRunResult {
  readonly text: string;
  readonly success: boolean;
}

/** Options of {@link runPatch}. */
export interface PatchRunOptions {
  readonly environment: Environment;
  readonly approvalPolicy: ApprovalPolicy;
  readonly approver?: Approver | undefined;
  /** Keep each line's `\n` / `\r\n` (default true, as the original). */
  readonly preserveLineEndings?: boolean | undefined;
  /** For the Approver: the call the patch belongs to, and the process id reserved for it (0 for none). */
  readonly callId: string;
  readonly processId?: number | undefined;
}

/**
 * The file system of `environment`: unconfined, or confined as its sandboxed commands are (the
 * sandbox in the executor's form: the original's `FileSystemSandboxContext` for an original
 * peer, as for its commands). The environment's own filesystem API (`environment.fs`) when it
 * has one; else this machine's files directly (local) or small processes on the executor (remote).
 */
export async function patchFileSystemFor(
  environment: Environment,
  sandboxed: boolean,
): Promise<PatchFileSystem> {
  const sandbox = sandboxed ? sandboxContextFor(environment) : undefined;
  const executorFs = (environment as { readonly fs?: ExecFileSystemLike }).fs;
  if (executorFs !== undefined || environment.isRemote) {
    const cwd = environment.settings.cwd;
    const param = await sandboxForPeer(environment, sandbox, cwd);
    if (executorFs !== undefined) return new ExecFileSystemPatchAdapter(executorFs, param);
    return new BackendPatchFileSystem(environment.backend, cwd, param);
  }
  if (sandbox === undefined || sandbox.profile === 'danger-full-access')
    return new LocalPatchFileSystem('all');
  const policy = resolveSandboxPolicy(sandbox, environment.settings.cwd);
  return new LocalPatchFileSystem(policy.writableRoots.map((root) => root.path));
}

function writableRoots(environment: Environment): string[] {
  const sandbox = sandboxContextFor(environment);
  if (sandbox.profile !== 'workspace-write') return [];
  // A remote executor's $TMPDIR is unknown here: only its /tmp counts.
  const env = environment.isRemote ? {} : process.env;
  return resolveSandboxPolicy(sandbox, environment.settings.cwd, { env }).writableRoots.map(
    (root) => root.path,
  );
}

const SANDBOX_REFUSALS = new Set(['EACCES', 'EPERM', 'EROFS']);

/**
 * Verifies, vets and applies a parsed patch in `cwd` of `environment` (the original's
 * apply_patch handler after parsing): reads the files (`apply_patch verification failed: …`),
 * refuses an empty patch or one the policy forbids (`patch rejected: …`), asks the Approver when
 * the policy wants it, then writes through the environment's files, sandboxed as its commands
 * are; a sandbox refusal is retried unsandboxed after approval unless the policy is `never`.
 */
export async function runPatch(
  parsed: ParsedPatch,
  cwd: string,
  options: PatchRunOptions,
): Promise<PatchRunResult> {
  const { environment } = options;
  let verified: VerifiedPatch;
  try {
    verified = await verifyPatch(parsed, cwd, await patchFileSystemFor(environment, false), {
      preserveLineEndings: options.preserveLineEndings ?? true,
    });
  } catch (error) {
    if (error instanceof PatchVerificationError) {
      return { text: `${VERIFICATION_FAILED_PREFIX}${error.message}`, success: false };
    }
    throw error;
  }
  const safety = assessPatchSafety(verified, {
    approvalPolicy: options.approvalPolicy,
    permissionProfile: environment.settings.permissionProfile,
    writableRoots: writableRoots(environment),
  });
  if (safety.kind === 'reject') return { text: `patch rejected: ${safety.reason}`, success: false };
  let sandboxed = safety.kind === 'apply' && safety.sandboxed;
  if (safety.kind === 'ask' && !(await approve(verified, options, undefined))) {
    return { text: PATCH_REJECTED_BY_USER, success: false };
  }
  const started = performance.now();
  let result: PatchApplyResult = await applyVerifiedPatch(
    verified,
    await patchFileSystemFor(environment, sandboxed),
  );
  if (
    sandboxed &&
    result.error !== undefined &&
    SANDBOX_REFUSALS.has(result.error.code) &&
    options.approvalPolicy !== 'never' &&
    (await approve(verified, options, SANDBOX_RETRY_REASON))
  ) {
    sandboxed = false;
    result = await applyVerifiedPatch(verified, await patchFileSystemFor(environment, false));
  }
  return { text: formatPatchResult(result, (performance.now() - started) / 1000), success: true };
}

async function approve(
  verified: VerifiedPatch,
  options: PatchRunOptions,
  reason: string | undefined,
): Promise<boolean> {
  const approver = options.approver ?? DENY_ALL_APPROVER;
  try {
    const decision = await approver({
      callId: options.callId,
      processId: options.processId ?? 0,
      command: ['apply_patch', verified.patch],
      cwd: verified.cwd,
      environmentId: options.environment.id,
      purpose: reason === undefined ? 'initial' : 'sandbox_retry',
      reason,
    });
    return decision === 'approved' || decision === 'approved_for_session';
  } catch {
    return false;
  }
}
