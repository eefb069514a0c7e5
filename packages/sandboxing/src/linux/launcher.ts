import { ExecError } from '@execd/protocol';
import { findTrustedExecutable } from '@execd/pty-utils';

/** The fd number bubblewrap reads its seccomp program from. */
export const SECCOMP_FD = 9;

/**
 * The launcher's whole environment. It runs outside the sandbox, as the executor (root here), and
 * so does bubblewrap after it: neither may see a variable the command chose. `LD_PRELOAD`,
 * `LD_AUDIT`, `LD_LIBRARY_PATH`, `GCONV_PATH`, `BASH_ENV`, `SHELLOPTS` + `PS4`, exported functions
 * and the rest of the loader's and the shell's list would otherwise run code as the executor. The
 * command's environment crosses the boundary as bubblewrap arguments (see {@link commandEnvFlags}).
 */
export const LAUNCHER_ENV: Readonly<Record<string, string>> = Object.freeze({
  PATH: '/usr/sbin:/usr/bin:/sbin:/bin',
});

/**
 * The launcher script, run by bash with no startup files (`$0` a label, `$1` the seccomp filter's
 * path, the rest the command to exec). Before bubblewrap starts it:
 * 1. runs the preamble (join the command's cgroups, set its file-size limit);
 * 2. closes every inherited fd above 2: a descriptor the executor inherited without close-on-exec
 *    (from a supervisor, a job runner) would otherwise reach the sandbox, which bubblewrap passes
 *    on, and let the command write a host file. Node cannot mark fds it did not open, so this is
 *    done here, by the kernel's own list in /proc, not by trusting the parent's flags;
 * 3. opens the filter on fd 9 and replaces itself with the command (the spawned pid stays bwrap's).
 * bash, because dash cannot name an fd above 9 in a redirection.
 */
function launcherScript(preamble: readonly string[]): string {
  return ['filter=$1; shift', ...preamble, FD_SWEEP_LINE, `exec "$@" ${SECCOMP_FD}<"$filter"`].join('\n');
}

/** The launcher's fd sweep: every descriptor above 2 is closed (see `launcherScript`). */
export const FD_SWEEP_LINE =
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not a template
  'for fd in /proc/self/fd/*; do fd=${fd##*/}; case $fd in 0|1|2) ;; *) eval "exec $fd>&-" ;; esac; done';

/** `$0` of the launcher, as seen in `ps`. */
const LAUNCHER_LABEL = 'execd-sandbox-launcher';

/** `bash --noprofile --norc -c script label args…`: how the launcher and the waiter run. */
export function bashScriptArgv(script: string, label: string, args: readonly string[]): string[] {
  return [launcherShell(), '--noprofile', '--norc', '-c', script, label, ...args];
}

let bash: string | undefined;

/** bash from a trusted system folder (root-owned, not writable by others; never from `$PATH`), cached. */
export function launcherShell(): string {
  bash ??= findTrustedExecutable('bash');
  if (bash === undefined) {
    throw new ExecError(
      'unsupported',
      'the sandbox launcher needs bash in /usr/bin or /bin (root-owned, not group- or world-writable)',
    );
  }
  return bash;
}

/**
 * The launcher argv around `inner` (bubblewrap, or the managed network's `nsenter … bwrap …`):
 * bash opens `filterPath` on fd {@link SECCOMP_FD} after `preamble` and the fd sweep. Spawn it
 * with {@link LAUNCHER_ENV} as its entire environment.
 */
export function withLauncher(
  filterPath: string,
  inner: readonly string[],
  preamble: readonly string[] = [],
): string[] {
  return bashScriptArgv(launcherScript(preamble), LAUNCHER_LABEL, [filterPath, ...inner]);
}

/**
 * The command's environment as bubblewrap arguments: `--clearenv` (bubblewrap's own, fixed
 * environment is not the command's) then `--setenv NAME VALUE` for each variable, so that every
 * variable, loader and shell ones included, acts only inside the sandbox.
 */
export function commandEnvFlags(env: Readonly<Record<string, string>>): string[] {
  const flags = ['--clearenv'];
  for (const [name, value] of Object.entries(env)) flags.push('--setenv', name, value);
  return flags;
}
