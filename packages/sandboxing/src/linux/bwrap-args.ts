import type { DeniedPathPlan } from '../access-plan.ts';
import type { FileSystemPlan } from '../file-system-plan.ts';

/** Options of {@link buildBwrapArgs}. */
export interface BwrapArgsOptions {
  readonly plan: FileSystemPlan;
  /** Adds `--unshare-net` (the seccomp network rules are in the filter, not here). */
  readonly networkDisabled: boolean;
  /**
   * `--new-session` (setsid) for pipe children, so a command cannot push input into a
   * controlling terminal (TIOCSTI). Never for PTY children: it would take the terminal away from
   * the shell and break job control.
   */
  readonly newSession: boolean;
  /** Mount a fresh `/proc` (default true; false when the kernel refuses, as the original's fallback). */
  readonly mountProc?: boolean;
  /** bubblewrap has `--disable-userns` (0.8+); otherwise the seccomp filter denies user namespaces. */
  readonly disableUserns?: boolean;
  /** The fd bubblewrap reads the seccomp program from, or undefined for none. */
  readonly seccompFd?: number;
  /**
   * Directories replaced by an empty read-only tmpfs inside the sandbox, after every bind (the
   * managed-network proxy's socket directory: the command must not see, replace or redirect the
   * sockets the bridge connects to, even under a writable root or full disk write).
   */
  readonly maskedDirs?: readonly string[];
  /**
   * An empty host file of mode 000, bound over each denied file (required when the plan denies a
   * file; see `deniedFileSource`). Its folder belongs in `maskedDirs`.
   */
  readonly deniedFile?: string;
}

function contains(root: string, path: string): boolean {
  return root === '/' || path === root || path.startsWith(`${root}/`);
}

/**
 * Host secrets replaced inside the sandbox: a folder by an empty read-only tmpfs, a file by the
 * null device (reads as empty, writes vanish; it cannot be removed or renamed, being a mount
 * point). `--dev-bind`, because bubblewrap's other binds are `nodev` and the file would then read
 * as "permission denied". After every bind, so no writable root re-exposes them.
 */
function maskArgs(plan: FileSystemPlan): string[] {
  const args: string[] = [];
  for (const { path, kind } of plan.masked ?? []) {
    if (kind === 'dir') args.push('--tmpfs', path, '--remount-ro', path);
    else args.push('--dev-bind', '/dev/null', path);
  }
  return args;
}

function depth(path: string): number {
  return path === '/' ? 0 : path.split('/').length - 1;
}

/** What a command can read before writable roots: the whole disk, or only the readable roots. */
function readBaseArgs(plan: FileSystemPlan): string[] {
  if (plan.readableRoots === undefined || plan.readableRoots.includes('/'))
    return ['--ro-bind', '/', '/', '--dev', '/dev'];
  // Restricted read: an empty root with only the readable roots bound in (as configured: a
  // command may run programs by those paths), shallowest first.
  const args = ['--tmpfs', '/', '--dev', '/dev'];
  const roots = [...plan.readableRoots].filter((root) => !contains('/dev', root));
  for (const root of roots.sort((a, b) => depth(a) - depth(b))) args.push('--ro-bind', root, root);
  return args;
}

/**
 * Masks of unreadable paths. A folder becomes an empty tmpfs nobody may list (`--perms 000`; the
 * command has no capability to override it); one that holds writable roots gets `--perms 111`
 * (traversable) and the roots' mount points, and is bound over before them. A file gets the
 * empty mode-000 `deniedFile`; a missing path (in a writable root) an empty read-only tmpfs, so
 * it cannot be created.
 */
function deniedArgs(
  items: readonly DeniedPathPlan[],
  roots: readonly string[],
  deniedFile: string | undefined,
): string[] {
  const args: string[] = [];
  for (const item of items) {
    const reopened = roots.filter((root) => root !== item.path && contains(item.path, root));
    if (item.kind === 'dir') {
      args.push('--perms', reopened.length > 0 ? '0111' : '0000', '--tmpfs', item.path);
      for (const root of reopened) args.push('--dir', root);
      args.push('--remount-ro', item.path);
    } else if (item.kind === 'missing') {
      args.push('--perms', '0000', '--tmpfs', item.path, '--remount-ro', item.path);
    } else {
      if (deniedFile === undefined) throw new Error('sandboxing: a denied file needs the deniedFile source');
      args.push('--ro-bind', deniedFile, item.path);
    }
  }
  return args;
}

function fileSystemArgs(plan: FileSystemPlan, deniedFile: string | undefined): string[] {
  if (plan.fullDiskWrite)
    return ['--bind', '/', '/', '--dev', '/dev', '--bind-try', '/dev/shm', '/dev/shm', ...maskArgs(plan)];
  const args = readBaseArgs(plan);
  const roots = plan.writableRoots.map(({ root }) => root);
  // A denied folder holding writable roots is masked first, outside every writable root; the
  // rest after the binds, so a writable root never re-exposes them.
  const denied = plan.denied ?? [];
  // The deepest writable root holding each denied path (undefined: none does).
  const owner = (path: string): string | undefined =>
    roots.filter((root) => contains(root, path)).sort((a, b) => depth(b) - depth(a))[0];
  const outer = denied.filter(
    (item) => owner(item.path) === undefined && roots.some((root) => contains(item.path, root)),
  );
  args.push(...deniedArgs(outer, roots, deniedFile));
  // Each root's own denied paths right after its bind, before deeper roots are bound (ancestors
  // first): a deeper root inside a denied folder gets its mount point and is bound after it.
  const nested = new Set<DeniedPathPlan>();
  for (const { root } of plan.writableRoots) {
    args.push('--bind', root, root);
    const own = denied.filter((item) => owner(item.path) === root);
    for (const item of own) nested.add(item);
    args.push(...deniedArgs(own, roots, deniedFile));
  }
  // A writable root above /dev would have bound the host's device nodes over the fresh /dev.
  if (roots.some((root) => contains(root, '/dev'))) args.push('--dev', '/dev');
  for (const { readOnly } of plan.writableRoots) {
    for (const item of readOnly) {
      // An existing path is bound onto itself read-only: a mount point cannot be written,
      // renamed, replaced or unlinked (EBUSY), nor hard-linked elsewhere (EXDEV). A missing one
      // gets an empty read-only tmpfs, so it cannot be created either.
      if (item.type === 'missing') args.push('--tmpfs', item.path, '--remount-ro', item.path);
      else if (item.type === 'special') args.push('--ro-bind', '/dev/null', item.path);
      else args.push(item.nested ? '--ro-bind-try' : '--ro-bind', item.path, item.path);
    }
  }
  // Likewise /sys: sysfs holds host-wide knobs (e.g. kernel/uevent_helper) a root command could write.
  if (roots.some((root) => contains(root, '/sys'))) args.push('--ro-bind', '/sys', '/sys');
  // A read-only carve-out is bound from the host's tree, over the masks its root's own denied
  // paths got: those on it or under it are masked again on top (deny wins over read).
  const boundReadOnly = plan.writableRoots.flatMap(({ readOnly }) =>
    readOnly.filter((item) => item.type !== 'missing').map((item) => item.path),
  );
  const covered = (item: DeniedPathPlan): boolean => boundReadOnly.some((path) => contains(path, item.path));
  args.push(
    ...deniedArgs(
      denied.filter((item) => !outer.includes(item) && (!nested.has(item) || covered(item))),
      roots,
      deniedFile,
    ),
  );
  args.push(...maskArgs(plan));
  return args;
}

/**
 * The bubblewrap flags for a plan, up to and including `--` (spec §5.2, hardened for a root
 * executor): read-only `/`, a fresh `/dev`, writable roots bound read-write, carve-outs bound
 * read-only or masked, user/pid/ipc/uts namespaces (+ net when the network is off), nested user
 * namespaces disabled, a fresh `/proc` with `/proc/sys` read-only, the cwd, the seccomp filter,
 * every capability dropped, and death with the parent. Pure: no filesystem access.
 */
export function buildBwrapArgs(options: BwrapArgsOptions): string[] {
  const args = options.newSession ? ['--new-session', '--die-with-parent'] : ['--die-with-parent'];
  args.push(...fileSystemArgs(options.plan, options.deniedFile));
  for (const dir of options.maskedDirs ?? []) args.push('--tmpfs', dir, '--remount-ro', dir);
  args.push('--unshare-user');
  if (options.disableUserns !== false) args.push('--disable-userns');
  args.push('--unshare-pid', '--unshare-ipc', '--unshare-uts');
  if (options.networkDisabled) args.push('--unshare-net');
  if (options.mountProc !== false) args.push('--proc', '/proc');
  // Root in the sandbox is root on the host for sysctl permission checks (they look at the uid,
  // not capabilities): without this, it could set host sysctls such as kernel.core_pattern.
  args.push('--ro-bind', '/proc/sys', '/proc/sys');
  args.push('--chdir', options.plan.cwd);
  if (options.seccompFd !== undefined) args.push('--seccomp', String(options.seccompFd));
  args.push('--cap-drop', 'ALL', '--');
  return args;
}
