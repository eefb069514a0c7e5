import type { ResourceController } from './resource-control.ts';

/** The v2 controllers execd enables for command groups (`cpu` accounting needs none). */
export const CGROUP2_CONTROLLERS: readonly ResourceController[] = ['pids', 'memory'];

/** What detection read about the executor's own v2 cgroup. */
export interface Cgroup2State {
  /** The hierarchy's real root (no `cgroup.type` file): exempt from the no-internal-processes rule. */
  readonly isRoot: boolean;
  /** `cgroup.controllers`: what the parent lets this cgroup hand down. */
  readonly available: readonly string[];
  /** `cgroup.subtree_control`: what is already enabled for its children. */
  readonly enabled: readonly string[];
  /** `cgroup.procs`: the processes directly in it. */
  readonly procs: readonly number[];
  /** This executor's pid. */
  readonly selfPid: number;
}

/** What to do to the executor's cgroup so that command groups can get the controllers. */
export interface Cgroup2Plan {
  /** Controllers to write into its `cgroup.subtree_control`. */
  readonly enable: readonly ResourceController[];
  /** Controllers usable in the end (after `enable`). */
  readonly usable: readonly ResourceController[];
  /** Move its processes into a leaf first: `self` (only the executor is there) or `all`. */
  readonly moveToLeaf: 'none' | 'self' | 'all';
  /** Why a wanted controller cannot be had. */
  readonly reasons: readonly string[];
}

/** Options of {@link planCgroup2Parent}. */
export interface Cgroup2PlanOptions {
  /** Allow moving processes other than the executor into the leaf (default false). */
  readonly moveProcessesToLeaf?: boolean | undefined;
}

/**
 * Decides how to get `pids` and `memory` for children of the executor's cgroup `dir`. cgroup v2
 * lets a non-root cgroup enable controllers for its children only while it has no processes of
 * its own; the executor lives in it, so it must first move into a leaf. That is done on its own
 * when the executor is alone there; other processes (a container's init, a sidecar) are moved
 * only with `moveProcessesToLeaf`, since they are not execd's to move.
 */
export function planCgroup2Parent(
  dir: string,
  state: Cgroup2State,
  options: Cgroup2PlanOptions = {},
): Cgroup2Plan {
  const reasons: string[] = [];
  const wanted = CGROUP2_CONTROLLERS.filter((c) => {
    if (state.available.includes(c)) return true;
    reasons.push(`${c} is not in ${dir}/cgroup.controllers (not enabled or delegated by the parent cgroup)`);
    return false;
  });
  const enable = wanted.filter((c) => !state.enabled.includes(c));
  if (enable.length === 0 || state.isRoot || state.procs.length === 0) {
    return { enable, usable: wanted, moveToLeaf: 'none', reasons };
  }
  const others = state.procs.filter((pid) => pid !== state.selfPid);
  if (others.length === 0) return { enable, usable: wanted, moveToLeaf: 'self', reasons };
  if (options.moveProcessesToLeaf) return { enable, usable: wanted, moveToLeaf: 'all', reasons };
  reasons.push(
    `${enable.join(' and ')} cannot be enabled in ${dir}/cgroup.subtree_control while it holds other ` +
      `processes (${others.slice(0, 5).join(', ')}${others.length > 5 ? ', ...' : ''}): run the executor in ` +
      'a cgroup of its own, or pass moveProcessesToLeaf',
  );
  return { enable: [], usable: wanted.filter((c) => state.enabled.includes(c)), moveToLeaf: 'none', reasons };
}
