import { posix } from 'node:path';
import { type Candidate, describeError, EXECD_GROUP_NAME, permissionHint } from './candidate.ts';
import {
  ensureDirectory,
  errnoCode,
  exists,
  readMembers,
  readOptional,
  writeControl,
  writeDenied,
} from './cgroup-fs.ts';
import { type Cgroup2Plan, planCgroup2Parent } from './cgroup2-plan.ts';
import { type CgroupMembership, type CgroupMount, cgroupDirectory } from './proc-cgroup.ts';
import type { ResourceControl, ResourceController } from './resource-control.ts';

/** The leaf the executor moves itself into on v2 when it must empty its cgroup (see planCgroup2Parent). */
export const EXECUTOR_LEAF_NAME = 'execd-executor';

/** Rounds of moving processes to the leaf: a process may fork while we move its parent. */
const LEAF_MOVE_ROUNDS = 5;

function words(text: string | undefined): string[] {
  return (text ?? '').split(/\s+/).filter(Boolean);
}

async function moveToLeaf(dir: string, plan: Cgroup2Plan): Promise<void> {
  const leaf = posix.join(dir, EXECUTOR_LEAF_NAME);
  await ensureDirectory(leaf);
  for (let round = 0; round < LEAF_MOVE_ROUNDS; round++) {
    const pids = await readMembers([posix.join(dir, 'cgroup.procs')]);
    const toMove = plan.moveToLeaf === 'all' ? pids : pids.filter((pid) => pid === process.pid);
    if (toMove.length === 0) return;
    for (const pid of toMove) {
      try {
        await writeControl(posix.join(leaf, 'cgroup.procs'), String(pid));
      } catch (error) {
        if (errnoCode(error) !== 'ESRCH') throw error;
      }
    }
  }
}

async function prepare(
  dir: string,
  plan: Cgroup2Plan,
  reasons: string[],
): Promise<ResourceControl | undefined> {
  let enabled = words(await readOptional(posix.join(dir, 'cgroup.subtree_control')));
  if (plan.enable.length > 0) {
    try {
      if (plan.moveToLeaf !== 'none') await moveToLeaf(dir, plan);
      await writeControl(
        posix.join(dir, 'cgroup.subtree_control'),
        plan.enable.map((c) => `+${c}`).join(' '),
      );
    } catch (error) {
      reasons.push(`enabling ${plan.enable.join(' and ')} in ${dir} failed: ${describeError(error)}`);
    }
    enabled = words(await readOptional(posix.join(dir, 'cgroup.subtree_control')));
  }
  const parent = posix.join(dir, EXECD_GROUP_NAME);
  try {
    await ensureDirectory(parent);
  } catch (error) {
    const code = describeError(error);
    reasons.push(`cannot create ${parent}: ${code}; ${permissionHint(code)}`);
    return undefined;
  }
  const usable = plan.usable.filter((c) => enabled.includes(c));
  const inParent = words(await readOptional(posix.join(parent, 'cgroup.subtree_control')));
  const missing = usable.filter((c) => !inParent.includes(c));
  if (missing.length > 0) {
    try {
      await writeControl(posix.join(parent, 'cgroup.subtree_control'), missing.map((c) => `+${c}`).join(' '));
    } catch (error) {
      reasons.push(`enabling ${missing.join(' and ')} in ${parent} failed: ${describeError(error)}`);
    }
  }
  const granted = words(await readOptional(posix.join(parent, 'cgroup.subtree_control')));
  const controllers: ResourceController[] = [...usable.filter((c) => granted.includes(c)), 'cpu'];
  const reason = reasons.length > 0 ? reasons.join('; ') : undefined;
  return reason === undefined
    ? { kind: 'cgroup2', controllers, parent }
    : { kind: 'cgroup2', controllers, parent, reason };
}

/** Looks at the v2 hierarchy without changing anything. */
export async function probeCgroup2(
  mounts: readonly CgroupMount[],
  memberships: readonly CgroupMembership[],
  options: { readonly moveProcessesToLeaf?: boolean | undefined },
): Promise<Candidate> {
  const none = (reason: string): Candidate => ({
    kind: 'cgroup2',
    controllers: [],
    reasons: [reason],
    prepare: async () => undefined,
  });
  const own = memberships.find((m) => m.version === 2);
  if (own === undefined) return none('cgroup v2: this process is in no v2 cgroup');
  const v2Mounts = mounts.filter((m) => m.version === 2);
  if (v2Mounts.length === 0) return none('cgroup v2: no cgroup2 filesystem is mounted');
  let dir = v2Mounts.map((m) => cgroupDirectory(m, own.path)).find((d) => d !== undefined);
  if (dir === undefined)
    return none(`cgroup v2: the executor's cgroup ${own.path} is not visible under any mount`);
  // An earlier detection moved the executor into its leaf: the cgroup to use is the leaf's parent.
  if (posix.basename(dir) === EXECUTOR_LEAF_NAME) dir = posix.dirname(dir);
  const denied = await writeDenied(dir);
  if (denied !== undefined)
    return none(`cgroup v2: cannot write ${dir}: ${denied}; ${permissionHint(denied)}`);
  const [available, enabled, procs, hasType] = await Promise.all([
    readOptional(posix.join(dir, 'cgroup.controllers')),
    readOptional(posix.join(dir, 'cgroup.subtree_control')),
    readMembers([posix.join(dir, 'cgroup.procs')]),
    exists(posix.join(dir, 'cgroup.type')),
  ]);
  const plan = planCgroup2Parent(
    dir,
    { isRoot: !hasType, available: words(available), enabled: words(enabled), procs, selfPid: process.pid },
    options,
  );
  const reasons = [...plan.reasons];
  const cgroupDir = dir;
  return {
    kind: 'cgroup2',
    controllers: [...plan.usable, 'cpu'],
    reasons,
    prepare: () => prepare(cgroupDir, plan, reasons),
  };
}
