import type { SandboxType } from '@execd/protocol';

/** The output of a finished command, as denial detection reads it. */
export interface CommandOutput {
  readonly exitCode: number;
  /** stdout (and PTY output) as text. */
  readonly stdout: string;
  readonly stderr: string;
  /** Everything in arrival order. */
  readonly aggregated: string;
}

/** Lowercase phrases that mark a sandbox refusal in a failed command's output (the original's list). */
export const SANDBOX_DENIAL_KEYWORDS: readonly string[] = [
  'operation not permitted',
  'permission denied',
  'read-only file system',
  'seccomp',
  'sandbox',
  'landlock',
  'failed to write file',
];

/** Exit codes that mean usage error (2), not executable (126) and not found (127): not a denial. */
export const QUICK_REJECT_EXIT_CODES: readonly number[] = [2, 126, 127];

/** 128 + SIGSYS (31): a process killed by a seccomp filter. */
export const SIGSYS_EXIT_CODE = 159;

/** True when a failed command's output contains one of {@link SANDBOX_DENIAL_KEYWORDS}. */
export function hasDenialKeyword(output: CommandOutput): boolean {
  if (output.exitCode === 0) return false;
  return [output.stderr, output.stdout, output.aggregated].some((text) => {
    const lower = text.toLowerCase();
    return SANDBOX_DENIAL_KEYWORDS.some((keyword) => lower.includes(keyword));
  });
}

/**
 * Whether a command most likely failed because the sandbox refused it, exactly as the
 * original's `is_likely_sandbox_denied` (spec §5.5): never unsandboxed or on exit 0; yes on a
 * keyword (checked before the quick-reject codes); no on 2/126/127; yes on 159 under the Linux
 * sandbox; otherwise no.
 */
export function isLikelySandboxDenied(sandboxType: SandboxType, output: CommandOutput): boolean {
  if (sandboxType === 'none' || output.exitCode === 0) return false;
  if (hasDenialKeyword(output)) return true;
  if (QUICK_REJECT_EXIT_CODES.includes(output.exitCode)) return false;
  return sandboxType === 'linuxSeccomp' && output.exitCode === SIGSYS_EXIT_CODE;
}
