import { joinWrapperPerl } from '@execd/pty-utils';
import { type DetectResourceControlOptions, detectResourceControl } from './limits/index.ts';

/** How the executor finds every process of a command's tree (to end it with the command). */
export interface ContainmentInfo {
  /**
   * `cgroup2`/`cgroup1`: a cgroup per command, sandboxed or not (every descendant, daemons
   * included); `marker`: no cgroup here, an unsandboxed command's tree found by the environment
   * marker every process of it inherits (a process that clears its environment escapes), a
   * sandboxed one's by its pid namespace (nothing escapes); `session`: not Linux, the process
   * group and session (a `setsid` daemon escapes).
   */
  readonly kind: 'cgroup2' | 'cgroup1' | 'marker' | 'session';
  /** One line for people. */
  readonly summary: string;
}

/**
 * Which containment this executor's commands get (Linux; elsewhere `session`). Detection is the
 * resource limits' (`detectResourceControl`, memoized); an unsandboxed command joins its group
 * through a perl wrapper, so without a trusted perl unsandboxed commands fall back to `session`.
 */
export async function detectContainment(
  options: DetectResourceControlOptions = {},
): Promise<ContainmentInfo> {
  if (process.platform !== 'linux')
    return { kind: 'session', summary: 'process group and session of each command' };
  const control = await detectResourceControl(options);
  if (control.kind === 'none') {
    return {
      kind: 'marker',
      summary: `no cgroup (${control.reason}): unsandboxed commands by an environment marker scan of /proc, sandboxed ones by their pid namespace`,
    };
  }
  if (joinWrapperPerl() === null) {
    return {
      kind: 'marker',
      summary: `a ${control.kind} group per sandboxed command; unsandboxed commands by an environment marker scan of /proc (no perl in /usr/bin or /bin to join a group)`,
    };
  }
  return { kind: control.kind, summary: `a ${control.kind} group per command, sandboxed or not` };
}
