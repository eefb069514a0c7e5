import { posix } from 'node:path';
import type { PermissionProfileName } from '@execd/protocol';
import type { ApprovalPolicy } from '../tools/exec-command-policy.ts';
import type { VerifiedPatch } from './verify.ts';

/** What to do with a verified patch before writing anything (the original's `assess_patch_safety`). */
export type PatchSafety =
  /** Write it; `sandboxed` confines the writes to the writable roots. */
  | { readonly kind: 'apply'; readonly sandboxed: boolean }
  /** Ask the host's Approver; a yes writes without the sandbox. */
  | { readonly kind: 'ask' }
  /** Refuse it; `reason` follows `patch rejected: `. */
  | { readonly kind: 'reject'; readonly reason: string };

/** The rejection reasons, as the original words them. */
export const PATCH_REJECTED_EMPTY = 'empty patch';
export const PATCH_REJECTED_OUTSIDE = 'writing outside of the project; rejected by user approval settings';
export const PATCH_REJECTED_READ_ONLY =
  'writing is blocked by read-only sandbox; rejected by user approval settings';

/** Options of {@link assessPatchSafety}. */
export interface PatchSafetyOptions {
  readonly approvalPolicy: ApprovalPolicy;
  readonly permissionProfile: PermissionProfileName;
  /** Absolute folders a sandboxed write may touch (workspace roots, `/tmp`, `$TMPDIR`). */
  readonly writableRoots: readonly string[];
}

/** Every path a patch writes: added, deleted and updated files and move destinations. */
export function writtenPaths(verified: VerifiedPatch): string[] {
  const paths: string[] = [];
  for (const change of verified.changes) {
    paths.push(change.path);
    if (change.type === 'update' && change.movePath !== undefined) paths.push(change.movePath);
  }
  return paths;
}

function isInside(path: string, root: string): boolean {
  const relative = posix.relative(posix.resolve(root), posix.resolve(path));
  return relative === '' || (relative !== '..' && !relative.startsWith('../') && !posix.isAbsolute(relative));
}

/**
 * Decides how a verified patch may be written: an empty patch is refused; `untrusted` always
 * asks; full access writes unsandboxed; a patch that stays inside the writable roots (by its
 * lexically normalised paths) is written in the sandbox, as is any patch under `on-failure`
 * (a sandbox refusal then asks); otherwise `never` refuses and `on-request` asks.
 */
export function assessPatchSafety(verified: VerifiedPatch, options: PatchSafetyOptions): PatchSafety {
  if (verified.changes.length === 0) return { kind: 'reject', reason: PATCH_REJECTED_EMPTY };
  if (options.approvalPolicy === 'untrusted') return { kind: 'ask' };
  if (options.permissionProfile === 'danger-full-access') return { kind: 'apply', sandboxed: false };
  const constrained =
    options.permissionProfile === 'workspace-write' &&
    writtenPaths(verified).every((path) => options.writableRoots.some((root) => isInside(path, root)));
  if (constrained || options.approvalPolicy === 'on-failure') return { kind: 'apply', sandboxed: true };
  if (options.approvalPolicy === 'never') {
    return {
      kind: 'reject',
      reason: options.permissionProfile === 'read-only' ? PATCH_REJECTED_READ_ONLY : PATCH_REJECTED_OUTSIDE,
    };
  }
  return { kind: 'ask' };
}
