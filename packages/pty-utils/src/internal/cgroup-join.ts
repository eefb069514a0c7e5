import { ExecError } from '@execd/protocol';
import type { ResolvedSpawn } from '../executables/resolve-program.ts';
import { findTrustedExecutable } from '../executables/trusted-executable.ts';

/**
 * Exit status of a child that could not join its cgroup; the program never ran. 125, as the
 * sandbox launcher's own failures; the stderr line starting with `execd:` tells it apart.
 */
export const CGROUP_JOIN_FAILED_EXIT_CODE = 125;

/**
 * The join-then-exec wrapper: writes its own pid into each `cgroup.procs` file (if any), closes
 * every descriptor above 2, then execs the program with the argv[0] it was given (`exec {file}
 * @argv` keeps the pid, so the program and everything it ever starts, a `setsid` daemon
 * included, are in the group). perl, because it passes the environment on untouched (a POSIX
 * shell adds `PWD`, bash `SHLVL` and `_`) and can set argv[0]; it is Essential on Debian-family
 * systems. Its own startup variables (`PERL5OPT`, `PERL5LIB`, …) are taken out of its
 * environment and put back right before the exec, so the command's environment cannot change
 * the wrapper and the command still gets them.
 */
const JOIN_SCRIPT = [
  'my $n = shift @ARGV; my @files = splice(@ARGV, 0, $n);',
  'my $m = shift @ARGV; my @restore = splice(@ARGV, 0, 2 * $m);',
  'for my $f (@files) {',
  '  my $h; my $ok = sysopen($h, $f, 1) && defined(syswrite($h, "$$\\n")) && close($h);',
  `  if (!$ok) { print STDERR "execd: cannot join the command cgroup $f: $!\\n"; exit ${CGROUP_JOIN_FAILED_EXIT_CODE}; }`,
  '}',
  // Then every descriptor above 2 is closed (another command's terminal master, see
  // `stray-descriptors.ts`): `&=` adopts the number without a dup, `close` closes it.
  "if (opendir(my $d, '/proc/self/fd')) {",
  '  my @fds = grep { /^\\d+$/ && $_ > 2 } readdir($d); closedir($d);',
  "  for my $fd (@fds) { my $h; close($h) if open($h, '<&=', $fd) || open($h, '>&=', $fd); }",
  '}',
  'delete $ENV{PERL_BADLANG};',
  'while (@restore) { my $k = shift @restore; $ENV{$k} = shift @restore; }',
  'my $file = shift @ARGV; exec { $file } @ARGV;',
  'print STDERR "exec $file: $!\\n"; exit 127;',
].join('\n');

let perl: string | null | undefined;

/** perl from a trusted system folder (never from the child's `PATH`), cached; null when none. */
export function joinWrapperPerl(): string | null {
  perl ??= findTrustedExecutable('perl') ?? null;
  return perl;
}

/** What to exec instead of the program so that it starts inside its cgroup(s). */
export interface JoinedSpawn {
  /** perl. */
  readonly file: string;
  /** perl's arguments (after its argv[0]). */
  readonly args: readonly string[];
  /** perl's environment: the child's without perl's own startup variables. */
  readonly env: Readonly<Record<string, string>>;
}

/**
 * Wraps the resolved spawn (`file`, `arg0`, its arguments, its environment) so that it joins
 * `procsFiles` before it execs. Throws `unsupported` when no trusted perl is installed (callers
 * check {@link joinWrapperPerl} first).
 */
export function joinCgroupsCommand(procsFiles: readonly string[], spawn: ResolvedSpawn): JoinedSpawn {
  const { file, arg0, env } = spawn;
  const args = spawn.argv.slice(1);
  const wrapper = joinWrapperPerl();
  if (wrapper === null) {
    throw new ExecError('unsupported', 'joining a command cgroup needs perl in /usr/bin or /bin');
  }
  const wrapperEnv: Record<string, string> = {};
  const restore: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (name.startsWith('PERL')) restore.push(name, value);
    else wrapperEnv[name] = value;
  }
  // An unknown locale in the command's environment must not make perl warn on its stderr.
  wrapperEnv.PERL_BADLANG = '0';
  return {
    file: wrapper,
    args: [
      '-e',
      JOIN_SCRIPT,
      '--',
      String(procsFiles.length),
      ...procsFiles,
      String(restore.length / 2),
      ...restore,
      file,
      arg0,
      ...args,
    ],
    env: wrapperEnv,
  };
}
