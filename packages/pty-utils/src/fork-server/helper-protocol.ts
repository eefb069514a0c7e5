import { constants as osConstants } from 'node:os';
import type { ResolvedSpawn } from '../executables/resolve-program.ts';
import type { toExitStatus } from '../exit-status.ts';
import type { ExitStatus, SpawnOptions } from '../types.ts';

/*
 * The helper protocol (both helpers speak it). Requests arrive on the helper's stdin as frames: a
 * 4-byte big-endian length, then NUL-separated fields.
 * - `s id stdin cwd file nargv argv… nenv NAME=VALUE… ngroups procsfile… nhomes tasksfile…`
 *   starts a command: three pipes (stdin only for `stdin` = `p`, else /dev/null; or, when
 *   `stdin` is a path, in that terminal, which the server opened: Python helper only), in `cwd` (a
 *   failure is the request's), with exactly the environment given, `file` exec'd with `argv`
 *   (argv[0] included), in a session of its own, every signal at its default and none blocked,
 *   holding descriptors 0-2 only, and a member of the cgroups whose `procs` files are given
 *   before its program runs. `homes` (cgroup v1, one per group, or none) are the server's own
 *   groups' `tasks` files, where the helper was started: a helper that steps into the command's
 *   groups to start it comes back there (the perl helper ignores them).
 * - `r id…` closes the helper's ends of those commands' pipes (the server has opened its own by
 *   then, through `/proc/<helper>/fd/N`).
 * Replies on stdout, a line each: `P fd` once at start (a pipe, to prove the server can open the
 * helper's descriptors), `S id pid outfd errfd infd` (infd -1 without stdin), `F id errno stage`,
 * and `X pid waitstatus` when a command it started is reaped. The helper runs in a session of its
 * own (no terminal or process-group signal reaches it) and ends as soon as stdin closes: the
 * server closed it or died, and a sandbox's bubblewrap (`--die-with-parent`, its parent being the
 * helper) must then end with it, as it would with the server.
 */

/** The cgroups a command starts in. */
export type CgroupJoin = Pick<SpawnOptions, 'joinCgroups' | 'cgroupHome'>;

/** How a reaped command's wait status becomes an exit status (pipe or PTY exit codes). */
export type ExitDecoder = typeof toExitStatus;

/** One request as the helper reads it. */
export function encodeRequest(fields: readonly string[]): Buffer {
  const body = Buffer.from(fields.join('\0'), 'utf8');
  const head = Buffer.allocUnsafe(4);
  head.writeUInt32BE(body.length, 0);
  return Buffer.concat([head, body]);
}

/** The fields of an `s` request: `stdio` is `p`, `n` or a terminal's path. */
export function startRequest(id: string, resolved: ResolvedSpawn, stdio: string, join: CgroupJoin): string[] {
  const groups = join.joinCgroups ?? [];
  const homes = join.cgroupHome?.length === groups.length ? join.cgroupHome : [];
  const env = Object.entries(resolved.env).map(([name, value]) => `${name}=${value}`);
  const argv = [resolved.arg0, ...resolved.argv.slice(1)];
  return [
    's',
    id,
    stdio,
    resolved.cwd,
    resolved.file,
    String(argv.length),
    ...argv,
    String(env.length),
    ...env,
    String(groups.length),
    ...groups,
    String(homes.length),
    ...homes,
  ];
}

/** A wait status: the low 7 bits are the signal (0: a normal exit, whose code is bits 8-15). */
export function exitFromWaitStatus(status: number, decode: ExitDecoder): ExitStatus {
  const signal = status & 0x7f;
  return signal === 0 ? decode((status >> 8) & 0xff, null) : decode(null, signal);
}

const ERRNO_NAMES: ReadonlyMap<number, string> = new Map(
  Object.entries(osConstants.errno).map(([name, num]) => [num, name]),
);

/** `ENOENT` for an `F` reply's `2`. */
export function errnoName(errno: string): string {
  return ERRNO_NAMES.get(Number(errno)) ?? `errno ${errno}`;
}
