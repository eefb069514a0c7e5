import { ExecError } from '@execd/protocol';
import { MIN_FILE_LIMIT_BYTES } from './validate-limits.ts';

/**
 * Exit status of a launcher that could not apply the limits; the command never ran. 125 is
 * what wrappers use for their own failure (`timeout`, `env`, `docker run`); a command can exit
 * 125 too, so the stderr line (starting with `execd:`) is what tells them apart.
 */
export const LAUNCHER_LIMITS_FAILED_EXIT_CODE = 125;

/** Options of {@link launcherLimitLines}. */
export interface LauncherLimitOptions {
  /** `CommandCgroup.procsFiles`: the launcher writes its pid into each; none: no cgroup to join. */
  readonly procsFiles?: readonly string[] | undefined;
  /** RLIMIT_FSIZE for the command (bytes, rounded down to whole blocks); absent: inherited. */
  readonly maxFileBytes?: number | undefined;
  /**
   * The shell that runs the lines (default `bash`). `ulimit -f` counts 1024-byte blocks in bash
   * but 512-byte blocks in POSIX shells (dash, and bash in POSIX mode, which the lines turn off).
   */
  readonly shell?: 'bash' | 'sh' | undefined;
}

/** A word the shell reads back verbatim. */
function quote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

function orFail(what: string): string {
  return `|| { printf '%s\\n' ${quote(`execd: ${what}`)} >&2; exit ${LAUNCHER_LIMITS_FAILED_EXIT_CODE}; }`;
}

/**
 * Shell lines for the launcher that runs as root outside the sandbox right before `exec`ing
 * bubblewrap: join the command's cgroup(s) (`printf '%s\n' "$$" > <procs>`; the exec keeps the
 * pid, so bubblewrap and everything it starts are inside), then set RLIMIT_FSIZE. Either failing
 * ends the launch with {@link LAUNCHER_LIMITS_FAILED_EXIT_CODE} before the command runs.
 *
 * `ulimit -f N` sets the soft **and** hard limit. The command cannot raise it back: raising a
 * hard limit needs CAP_SYS_RESOURCE in the initial user namespace, and the sandbox runs in its
 * own user namespace with every capability dropped. Writing past the limit raises SIGXFSZ (the
 * writer dies, status 153) or, if it ignores the signal, fails with EFBIG.
 *
 * Not used, on purpose: `ulimit -u` (RLIMIT_NPROC) is never enforced for uid 0 (the kernel
 * exempts the root user and CAP_SYS_RESOURCE/CAP_SYS_ADMIN holders in fork), and the sandboxed
 * command is still uid 0 (mapped 0 → 0); it also counts every process of the user host-wide,
 * not the command's: the pids cgroup is the per-command limit. `ulimit -v` (RLIMIT_AS) breaks
 * programs that reserve large address ranges (Node, the JVM, Go, sanitizers) without bounding
 * real memory: the memory cgroup does that.
 */
export function launcherLimitLines(options: LauncherLimitOptions): string[] {
  const lines: string[] = [];
  for (const file of options.procsFiles ?? []) {
    lines.push(`printf '%s\\n' "$$" > ${quote(file)} ${orFail(`cannot join the command cgroup ${file}`)}`);
  }
  if (options.maxFileBytes !== undefined) {
    if (!Number.isInteger(options.maxFileBytes) || options.maxFileBytes < MIN_FILE_LIMIT_BYTES) {
      throw new ExecError(
        'invalidParams',
        `maxFileBytes must be an integer >= ${MIN_FILE_LIMIT_BYTES}, got ${options.maxFileBytes}`,
      );
    }
    const shell = options.shell ?? 'bash';
    const blockBytes = shell === 'bash' ? 1024 : 512;
    if (shell === 'bash') lines.push('set +o posix');
    const blocks = Math.floor(options.maxFileBytes / blockBytes);
    lines.push(`ulimit -f ${blocks} ${orFail('cannot set the file-size limit')}`);
  }
  return lines;
}
