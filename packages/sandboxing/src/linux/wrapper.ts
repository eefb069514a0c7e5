/** The POSIX shell that opens the seccomp filter for bubblewrap, outside the sandbox. */
export const LAUNCHER_SHELL = '/bin/sh';

/** The fd number bubblewrap reads its seccomp program from (a shell can redirect fds 0-9). */
export const SECCOMP_FD = 9;

/**
 * The launcher script: `$0` is the filter's path, `"$@"` the bubblewrap command. It replaces
 * itself with bubblewrap (so the spawned pid is bwrap's) with the filter open on fd 9. Needed
 * because neither node-pty nor pty-utils' pipes can hand a child an extra fd.
 */
const LAUNCHER_SCRIPT = `exec "$@" ${SECCOMP_FD}<"$0"`;

/** Prefixes a bubblewrap argv with the launcher that opens `filterPath` on {@link SECCOMP_FD}. */
export function withSeccompLauncher(filterPath: string, bwrapArgv: readonly string[]): string[] {
  return [LAUNCHER_SHELL, '-c', LAUNCHER_SCRIPT, filterPath, ...bwrapArgv];
}
