import { joinWrapperPerl } from '@execd/pty-utils';
import { type DetectResourceControlOptions, detectResourceControl } from './limits/index.ts';

/** How the executor finds every process of a command's tree (to end it with the command). */
export interface ContainmentInfo {
  /**
   * `cgroup2`/`cgroup1`: a cgroup per command, sandboxed or not (every descendant, daemons
   * included); `session`: no cgroup here, an unsandboxed command's process group and session
   * (a `setsid` daemon escapes), a sandboxed one's pid namespace (nothing escapes).
   */
  readonly kind: 'cgroup2' | 'cgroup1' | 'session';
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
      kind: 'session',
      summary: `no cgroup (${control.reason}): unsandboxed commands by process group and session, sandboxed ones by their pid namespace`,
    };
  }
  if (joinWrapperPerl() === null) {
    return {
      kind: control.kind,
      summary: `a ${control.kind} group per sandboxed command; unsandboxed commands by process group and session (no perl in /usr/bin or /bin to join a group)`,
    };
  }
  return { kind: control.kind, summary: `a ${control.kind} group per command, sandboxed or not` };
}
