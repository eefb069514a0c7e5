import { posix } from 'node:path';
import { type Candidate, describeError, EXECD_GROUP_NAME, permissionHint } from './candidate.ts';
import { ensureDirectory, exists, writeDenied } from './cgroup-fs.ts';
import { type CgroupMembership, type CgroupMount, cgroupDirectory } from './proc-cgroup.ts';
import type { ResourceControl, ResourceController } from './resource-control.ts';

/** The v1 hierarchy behind each controller, and a file that proves it works in a child group. */
export const CGROUP1_HIERARCHIES: Readonly<Record<ResourceController, { name: string; marker: string }>> = {
  pids: { name: 'pids', marker: 'pids.max' },
  memory: { name: 'memory', marker: 'memory.limit_in_bytes' },
  cpu: { name: 'cpuacct', marker: 'cpuacct.usage' },
};

const ORDER: readonly ResourceController[] = ['pids', 'memory', 'cpu'];

async function prepare(
  dirs: ReadonlyMap<ResourceController, string>,
  reasons: string[],
): Promise<ResourceControl | undefined> {
  const parent: Partial<Record<ResourceController, string>> = {};
  const controllers: ResourceController[] = [];
  for (const [controller, dir] of dirs) {
    const group = posix.join(dir, EXECD_GROUP_NAME);
    try {
      await ensureDirectory(group);
    } catch (error) {
      const code = describeError(error);
      reasons.push(`cgroup v1 ${controller}: cannot create ${group}: ${code}; ${permissionHint(code)}`);
      continue;
    }
    if (!(await exists(posix.join(group, CGROUP1_HIERARCHIES[controller].marker)))) {
      reasons.push(`cgroup v1 ${controller}: ${group} has no ${CGROUP1_HIERARCHIES[controller].marker}`);
      continue;
    }
    parent[controller] = group;
    controllers.push(controller);
  }
  if (controllers.length === 0) return undefined;
  const reason = reasons.length > 0 ? reasons.join('; ') : undefined;
  return reason === undefined
    ? { kind: 'cgroup1', controllers, parent }
    : { kind: 'cgroup1', controllers, parent, reason };
}

/**
 * Looks at the v1 hierarchies without changing anything. Command groups go under the executor's
 * own group in each hierarchy (`<mount>/<own path>/execd/<name>`), not under the hierarchy's
 * root, so that a limit set on the executor (a container's memory limit) still covers them.
 */
export async function probeCgroup1(
  mounts: readonly CgroupMount[],
  memberships: readonly CgroupMembership[],
): Promise<Candidate> {
  const dirs = new Map<ResourceController, string>();
  const reasons: string[] = [];
  for (const controller of ORDER) {
    const { name } = CGROUP1_HIERARCHIES[controller];
    const mount = mounts.find((m) => m.version === 1 && m.controllers.includes(name));
    const own = memberships.find((m) => m.version === 1 && m.controllers.includes(name));
    if (mount === undefined || own === undefined) {
      reasons.push(`cgroup v1 ${controller}: no ${name} hierarchy is mounted`);
      continue;
    }
    const dir = cgroupDirectory(mount, own.path);
    if (dir === undefined) {
      reasons.push(
        `cgroup v1 ${controller}: the executor's ${name} cgroup ${own.path} is not visible under ${mount.mountPoint}`,
      );
      continue;
    }
    const denied = await writeDenied(dir);
    if (denied !== undefined) {
      reasons.push(`cgroup v1 ${controller}: cannot write ${dir}: ${denied}; ${permissionHint(denied)}`);
      continue;
    }
    dirs.set(controller, dir);
  }
  return {
    kind: 'cgroup1',
    controllers: [...dirs.keys()],
    reasons,
    prepare: () => prepare(dirs, reasons),
  };
}
