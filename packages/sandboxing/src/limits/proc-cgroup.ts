import { posix } from 'node:path';

/** One cgroup filesystem mount, from /proc/self/mountinfo. */
export interface CgroupMount {
  readonly version: 1 | 2;
  /** Where it is mounted, e.g. `/sys/fs/cgroup/pids`. */
  readonly mountPoint: string;
  /** The cgroup shown at the mount point, relative to this process's cgroup namespace (usually `/`). */
  readonly root: string;
  /** v1: the controllers it carries (`pids`, `memory`, `cpu`, `cpuacct`, ...); v2: empty. */
  readonly controllers: readonly string[];
}

/** The kernel escapes space, tab, newline and backslash in mountinfo paths as `\ooo`. */
function unescapeOctal(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

/** The cgroup mounts listed in a /proc/<pid>/mountinfo text. */
export function parseCgroupMounts(mountinfo: string): CgroupMount[] {
  const mounts: CgroupMount[] = [];
  for (const line of mountinfo.split('\n')) {
    const fields = line.split(' ');
    const dash = fields.indexOf('-');
    if (dash < 6 || fields.length < dash + 4) continue;
    const fsType = fields[dash + 1];
    if (fsType !== 'cgroup' && fsType !== 'cgroup2') continue;
    const superOptions = fields[dash + 3]!.split(',');
    mounts.push({
      version: fsType === 'cgroup2' ? 2 : 1,
      mountPoint: unescapeOctal(fields[4]!),
      root: unescapeOctal(fields[3]!),
      controllers: fsType === 'cgroup2' ? [] : superOptions.filter((o) => o !== 'rw' && o !== 'ro'),
    });
  }
  return mounts;
}

/** One line of /proc/<pid>/cgroup: `hierarchy-id:controller,list:/path` (v2: `0::/path`). */
export interface CgroupMembership {
  /** v1 controllers of the hierarchy (`name=systemd` kept verbatim); empty for v2. */
  readonly controllers: readonly string[];
  readonly path: string;
  readonly version: 1 | 2;
}

/** The lines of a /proc/<pid>/cgroup text. */
export function parseProcCgroup(text: string): CgroupMembership[] {
  const entries: CgroupMembership[] = [];
  for (const line of text.split('\n')) {
    const first = line.indexOf(':');
    const second = line.indexOf(':', first + 1);
    if (first < 0 || second < 0) continue;
    const id = line.slice(0, first);
    const list = line.slice(first + 1, second);
    const path = line.slice(second + 1);
    const v2 = id === '0' && list === '';
    entries.push({ controllers: v2 ? [] : list.split(','), path, version: v2 ? 2 : 1 });
  }
  return entries;
}

/**
 * The directory of cgroup `path` under `mount`, or `undefined` when the mount does not show it
 * (a mount of another subtree, or a path outside the namespace such as `/../x`).
 */
export function cgroupDirectory(mount: CgroupMount, path: string): string | undefined {
  if (path.split('/').includes('..')) return undefined;
  const relative = posix.relative(mount.root, path);
  if (relative.startsWith('..') || posix.isAbsolute(relative)) return undefined;
  return relative === '' ? mount.mountPoint : posix.join(mount.mountPoint, relative);
}
