import { accessSync, constants } from 'node:fs';
import { ExecError } from '@execd/protocol';
import type { ResolvedSpawn } from '../executables/resolve-program.ts';

/**
 * Where to look for perl, the exec wrapper for an `arg0` override in a PTY. Fixed system paths,
 * not the child's PATH: the wrapper is ours, the child's environment is not.
 */
const PERL_PATHS: readonly string[] = ['/usr/bin/perl', '/bin/perl'];

/**
 * `exec { $file } @argv`: execve(file, argv) with argv[0] chosen freely. Perl leaves the
 * environment untouched (unlike bash's `exec -a`, which exports SHLVL/PWD and honours SHELLOPTS),
 * and `perl-base` is Essential on Debian-family systems.
 */
const PERL_EXEC_SCRIPT =
  'my $file = shift @ARGV; exec { $file } @ARGV; print STDERR "exec $file: $!\\n"; exit 127;';

let perlPath: string | null | undefined;

function findPerl(): string | null {
  if (perlPath === undefined) {
    perlPath =
      PERL_PATHS.find((path) => {
        try {
          accessSync(path, constants.X_OK);
          return true;
        } catch {
          return false;
        }
      }) ?? null;
  }
  return perlPath;
}

/** The program node-pty's native fork should exec for `spawn`, and its arguments (after argv[0]). */
export interface PtyCommand {
  readonly file: string;
  readonly args: readonly string[];
}

/**
 * How to exec `spawn` in a PTY. node-pty's fork always passes its `file` as argv[0], so an `arg0`
 * different from `argv[0]` goes through a perl `exec {file} arg0, args...`; without an override the
 * program is exec'd directly (`execvp` on the child's PATH, as validated).
 * Throws `unsupported` when an override is asked for and no perl is installed.
 */
export function ptyCommand(spawn: ResolvedSpawn): PtyCommand {
  const [program = spawn.file, ...args] = spawn.argv;
  if (spawn.arg0 === program) return { file: program, args };
  const perl = findPerl();
  if (perl === null) {
    throw new ExecError(
      'unsupported',
      `arg0 override in a PTY needs perl (looked in ${PERL_PATHS.join(', ')})`,
    );
  }
  return { file: perl, args: ['-e', PERL_EXEC_SCRIPT, '--', spawn.file, spawn.arg0, ...args] };
}
