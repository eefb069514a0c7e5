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

/**
 * Undoes {@link withSeccompLauncher}: the filter path and the wrapped argv, or undefined when
 * `argv` does not start with the launcher. The managed network puts its `nsenter` between the
 * two: the launcher must open the filter in the executor's own namespaces (from a user namespace,
 * `/proc/<executor>/fd/N` cannot be opened), then fd 9 is inherited through `nsenter` by bwrap.
 */
export function splitSeccompLauncher(
  argv: readonly string[],
): { readonly filterPath: string; readonly command: string[] } | undefined {
  const [shell, flag, script, filterPath, ...command] = argv;
  if (shell !== LAUNCHER_SHELL || flag !== '-c' || script !== LAUNCHER_SCRIPT || filterPath === undefined)
    return undefined;
  return { filterPath, command };
}

/**
 * Variables a shell acts on at startup (bash as `sh`: SHELLOPTS with a PS4 command
 * substitution, exported functions; ash/dash: ENV when interactive). The launcher runs outside
 * the sandbox, so it never sees them; bubblewrap hands them to the command with `--setenv`.
 */
const LAUNCHER_UNSAFE_ENV = /^(?:ENV|BASH_ENV|SHELLOPTS|BASHOPTS|PS4|BASH_XTRACEFD|BASH_FUNC_.*)$/;

/** The launcher's environment and the `--setenv NAME VALUE` flags that restore the rest for the command. */
export interface LauncherEnv {
  readonly env: Record<string, string>;
  readonly setenvFlags: string[];
}

/** Splits a command's environment into what the launcher may see and what bubblewrap must set. */
export function splitLauncherEnv(env: Readonly<Record<string, string>>): LauncherEnv {
  const safe: Record<string, string> = {};
  const setenvFlags: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (LAUNCHER_UNSAFE_ENV.test(name)) setenvFlags.push('--setenv', name, value);
    else safe[name] = value;
  }
  return { env: safe, setenvFlags };
}
