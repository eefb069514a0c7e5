import type { ResourceControl, ResourceController } from './resource-control.ts';

/** Name of the group, under the executor's own cgroup, whose children are command groups. */
export const EXECD_GROUP_NAME = 'execd';

/** What detection learned about one hierarchy before changing anything. */
export interface Candidate {
  readonly kind: 'cgroup2' | 'cgroup1';
  /** Controllers it should give (empty: unusable). */
  readonly controllers: readonly ResourceController[];
  /** Why a controller (or the whole hierarchy) cannot be used. */
  readonly reasons: readonly string[];
  /** Creates the `execd` group(s) and enables controllers; `undefined` when that failed (see reasons). */
  prepare(): Promise<ResourceControl | undefined>;
}

/** pids and memory are what stop a fork bomb and a memory hog; CPU accounting is a bonus. */
export function candidateScore(controllers: readonly ResourceController[]): number {
  return controllers.reduce((score, c) => score + (c === 'cpu' ? 1 : 2), 0);
}

/** An error's errno code or message, for a reason text. */
export function describeError(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  return error instanceof Error ? error.message : String(error);
}

/** The hint appended when the executor may not write a cgroup directory. */
export function permissionHint(code: string): string {
  if (code === 'EROFS') return 'the cgroup filesystem is mounted read-only';
  if (code !== 'EACCES' && code !== 'EPERM') return 'the cgroup directory is not usable';
  const uid = process.getuid?.() ?? -1;
  return uid === 0
    ? 'the executor runs as root but may not write there (a container without cgroup write access?)'
    : `the executor (uid ${uid}) may not write there: it needs a delegated cgroup subtree ` +
        '(systemd Delegate=yes, or a container runtime that delegates one)';
}
