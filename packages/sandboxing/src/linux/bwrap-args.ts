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

function fileSystemArgs(plan: FileSystemPlan): string[] {
  if (plan.fullDiskWrite)
    return ['--bind', '/', '/', '--dev', '/dev', '--bind-try', '/dev/shm', '/dev/shm', ...maskArgs(plan)];
  const args = ['--ro-bind', '/', '/', '--dev', '/dev'];
  for (const { root } of plan.writableRoots) args.push('--bind', root, root);
  const roots = plan.writableRoots.map(({ root }) => root);
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
  args.push(...fileSystemArgs(options.plan));
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
