import { closeSync, constants, fstatSync, openSync, readFileSync, writeSync } from 'node:fs';
import { joinWrapperPerl } from '@execd/pty-utils';
import { interruptResetEnv } from './interrupt-reset.ts';
import { bashScriptArgv, FD_SWEEP_LINE, SECCOMP_FD } from './launcher.ts';

/**
 * A sandbox started before its command is known (see `PreparedSandboxes`): bubblewrap is set up
 * with the next command's policy and runs a small bash waiter, fully confined, that blocks until
 * the executor says go and then replaces itself with the command. Three descriptors connect them,
 * none with a name a sandboxed process could open:
 * - the payload: an unnamed file of the executor (`/proc/<executor>/fd/N`), opened read-write by
 *   the launcher on {@link PAYLOAD_FD}; the waiter writes {@link WAITING_LINE} into it once it
 *   runs inside the sandbox, and the executor then writes the command's environment and argv
 *   after that line (the descriptor's offset is shared: the waiter reads from there);
 * - the go pipe: an anonymous pipe the launcher makes on {@link GO_FD} (a here-string's pipe,
 *   reopened read-write so it never reads EOF); bubblewrap closes its own copies, so only the
 *   waiter holds it, and the executor opens it through `/proc/<waiter>/fd/7` to write one byte;
 * - the seccomp filter on fd 9, as for any sandboxed command.
 * The waiter closes 7 and 8 before it execs, so the command holds what a cold start gives it.
 */
export const GO_FD = 7;
export const PAYLOAD_FD = 8;

/** What the waiter writes at the start of the payload file once it runs, before it blocks. */
export const WAITING_LINE = 'waiting\n';

/** The payload's first field: a format tag the waiter checks. */
const PAYLOAD_MAGIC = 'execd-payload-1';

/** The waiter's exit code when the payload is not what it expects (never a command's doing). */
export const WAITER_FAILED_EXIT_CODE = 125;

/** `$0` of the waiter, as seen in `ps` until the command replaces it. */
const WAITER_LABEL = 'execd-sandbox-waiter';

/**
 * The bash waiter, run inside the sandbox with an empty environment (`$1`: the trusted `env`).
 * It says it is waiting (see {@link WAITING_LINE}), blocks on one byte of the go pipe, reads
 * every NUL-terminated field of the payload in one `mapfile` (buffered: the payload is a regular
 * file), checks the frame, and execs
 * `env -i [--default-signal=INT] -- NAME=VALUE… program args…`: `env -i` gives the command exactly
 * its environment (bash's `exec` would add at least `SHLVL`), and, in a PTY, puts SIGINT back to its
 * default as a cold start's `env --default-signal=INT` does. Fields:
 * magic, reset (0/1), variable count, variables…, argv…, `end`.
 */
const BASH_WAITER_SCRIPT = [
  `printf '${WAITING_LINE.replace('\n', '\\n')}' >&${PAYLOAD_FD} || exit ${WAITER_FAILED_EXIT_CODE}`,
  `IFS= read -r -n 1 -u ${GO_FD} _ || exit ${WAITER_FAILED_EXIT_CODE}`,
  `exec ${GO_FD}<&-`,
  `mapfile -d '' -u ${PAYLOAD_FD} -t f || exit ${WAITER_FAILED_EXIT_CODE}`,
  `exec ${PAYLOAD_FD}<&-`,
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansions, not templates
  'n=${#f[@]}; v=${f[2]}',
  `[[ $n -ge 5 && \${f[0]} == ${PAYLOAD_MAGIC} && \${f[n-1]} == end && $v =~ ^(0|[1-9][0-9]*)$ ]] || exit ${WAITER_FAILED_EXIT_CODE}`,
  `(( v + 4 < n )) || exit ${WAITER_FAILED_EXIT_CODE}`,
  `for x in "\${f[@]:3:v}"; do [[ $x == [!=]*=* ]] || exit ${WAITER_FAILED_EXIT_CODE}; done`,
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansions, not templates
  'o=(); [[ ${f[1]} == 1 ]] && o=(--default-signal=INT)',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansions, not templates
  'exec "$1" -i "${o[@]}" -- "${f[@]:3:v}" "${f[@]:v+3:n-v-4}"',
].join('\n');

/**
 * The perl waiter: the same steps and checks as the bash one, but it execs the program itself
 * (`exec {program} argv…`, `execvp` with the command's `PATH` as `env` and bubblewrap use it) with
 * exactly the command's environment and, in a PTY, SIGINT back to its default: one exec (and
 * one dynamic load) fewer between the go and the command, ~0.6 ms here. No module is loaded
 * (`-f`: no sitecustomize either), so it opens no file. A program that cannot be run: a message
 * and 127 (not found) or 126, as `env` answers.
 */
const PERL_WAITER_SCRIPT = [
  `$0 = '${WAITER_LABEL}';`,
  `open(my $p, '+<&=', ${PAYLOAD_FD}) && open(my $g, '<&=', ${GO_FD}) or exit ${WAITER_FAILED_EXIT_CODE};`,
  `syswrite($p, "waiting\\n") == ${WAITING_LINE.length} or exit ${WAITER_FAILED_EXIT_CODE};`,
  `sysread($g, my $go, 1) == 1 or exit ${WAITER_FAILED_EXIT_CODE};`,
  'close($g);',
  'my @f;',
  '{ local $/ = "\\0"; @f = <$p>; chomp(@f); }',
  'close($p);',
  'my ($n, $v) = (scalar(@f), $f[2] // "");',
  `$n >= 5 && $f[0] eq '${PAYLOAD_MAGIC}' && $f[$n - 1] eq 'end' && $v =~ /\\A(?:0|[1-9][0-9]*)\\z/ && $v + 4 < $n or exit ${WAITER_FAILED_EXIT_CODE};`,
  "$SIG{INT} = 'DEFAULT' if $f[1] eq '1';",
  '%ENV = ();',
  `for my $e (@f[3 .. $v + 2]) { my $i = index($e, '='); $i > 0 or exit ${WAITER_FAILED_EXIT_CODE}; $ENV{substr($e, 0, $i)} = substr($e, $i + 1); }`,
  'my @a = @f[$v + 3 .. $n - 2];',
  'exec { $a[0] } @a;',
  'my $e = $! + 0;',
  'print STDERR "execd-sandbox-waiter: $a[0]: $!\\n";',
  'exit($e == 2 ? 127 : 126);',
].join('\n');

/**
 * What a waiter runs: perl (a trusted one; the sandbox must be able to read it) or bash with the
 * trusted GNU `env` (`interruptResetEnv`'s).
 */
export type WaiterProgram =
  | { readonly kind: 'perl'; readonly perl: string }
  | { readonly kind: 'bash'; readonly env: string };

/** The waiter programs this host has (trusted paths), for a plan to choose from. */
export interface WaiterPrograms {
  readonly perl?: string | undefined;
  /** The GNU `env` a bash waiter execs. */
  readonly env?: string | undefined;
}

/** The programs a waiter can run, in order of preference (`PreparedSandboxes`' `waiters`). */
export type WaiterKind = WaiterProgram['kind'];

/**
 * The trusted programs of `kinds` this host has: perl from a system folder (the cgroup wrapper's,
 * found once), and for bash the GNU `env` with `--default-signal` (probed once,
 * `interruptResetEnv`).
 */
export async function hostWaiterPrograms(kinds: readonly WaiterKind[]): Promise<WaiterPrograms> {
  return {
    perl: kinds.includes('perl') ? (joinWrapperPerl() ?? undefined) : undefined,
    env: kinds.includes('bash') ? await interruptResetEnv() : undefined,
  };
}

/**
 * perl where the sandbox reads the whole disk (perl's modules and libraries included), else bash
 * with `env`; undefined when the host has neither.
 */
export function chooseWaiter(programs: WaiterPrograms, fullRead: boolean): WaiterProgram | undefined {
  if (fullRead && programs.perl !== undefined) return { kind: 'perl', perl: programs.perl };
  return programs.env === undefined ? undefined : { kind: 'bash', env: programs.env };
}

/** The waiter's argv (what bubblewrap runs instead of a command). */
export function waiterCommand(program: WaiterProgram): string[] {
  return program.kind === 'perl'
    ? [program.perl, '-f', '-e', PERL_WAITER_SCRIPT]
    : bashScriptArgv(BASH_WAITER_SCRIPT, WAITER_LABEL, [program.env]);
}

/**
 * The launcher script of a waiting sandbox (`$1` the filter's path, `$2` the payload file's, the
 * rest bubblewrap's argv): the preamble and the fd sweep as for a cold start, then the go pipe on
 * fd 7 (a here-string is a pipe from bash 5.1 on; anything else is refused), the payload file
 * read-write on fd 8, and bubblewrap with the filter on fd 9.
 */
export function waitingLauncherScript(preamble: readonly string[]): string {
  return [
    'filter=$1; payload=$2; shift 2',
    ...preamble,
    FD_SWEEP_LINE,
    `exec ${GO_FD}<<<'' || exit ${WAITER_FAILED_EXIT_CODE}`,
    `exec ${GO_FD}<>/proc/self/fd/${GO_FD} || exit ${WAITER_FAILED_EXIT_CODE}`,
    `[[ -p /proc/self/fd/${GO_FD} ]] || exit ${WAITER_FAILED_EXIT_CODE}`,
    `IFS= read -r -u ${GO_FD} _`,
    `exec ${PAYLOAD_FD}<>"$payload" || exit ${WAITER_FAILED_EXIT_CODE}`,
    `exec "$@" ${SECCOMP_FD}<"$filter"`,
  ].join('\n');
}

/** `$0` of the waiting launcher (the cold launcher's). */
const WAITING_LAUNCHER_LABEL = 'execd-sandbox-launcher';

/** The waiting launcher's argv around bubblewrap's (see {@link waitingLauncherScript}). */
export function withWaitingLauncher(
  filterPath: string,
  payloadPath: string,
  inner: readonly string[],
  preamble: readonly string[],
): string[] {
  return bashScriptArgv(waitingLauncherScript(preamble), WAITING_LAUNCHER_LABEL, [
    filterPath,
    payloadPath,
    ...inner,
  ]);
}

/** What a waiting sandbox is told to run. */
export interface WaiterPayload {
  /** The command's entire environment (with the sandbox hints). */
  readonly env: Readonly<Record<string, string>>;
  /** Program and arguments, as a cold start would exec them (without the interrupt reset). */
  readonly command: readonly string[];
  /** Put SIGINT back to its default first (a PTY command; see `interrupt-reset.ts`). */
  readonly resetInterrupt: boolean;
}

/**
 * The payload's bytes, or undefined when the waiter cannot carry it exactly: a NUL anywhere, a
 * variable name that is empty or holds `=`, or a program name `env` would take for a variable.
 */
export function encodeWaiterPayload(payload: WaiterPayload): Buffer | undefined {
  const program = payload.command[0];
  if (program === undefined || program.includes('=')) return undefined;
  const variables: string[] = [];
  for (const [name, value] of Object.entries(payload.env)) {
    if (name === '' || name.includes('=') || name.includes('\0') || value.includes('\0')) return undefined;
    variables.push(`${name}=${value}`);
  }
  if (payload.command.some((arg) => arg.includes('\0'))) return undefined;
  const fields = [
    PAYLOAD_MAGIC,
    payload.resetInterrupt ? '1' : '0',
    String(variables.length),
    ...variables,
    ...payload.command,
    'end',
  ];
  return Buffer.from(`${fields.join('\0')}\0`);
}

/** The only child of `pid` (its main thread's), or undefined when it has none or several. */
function onlyChild(pid: number): number | undefined {
  let children: string[];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'latin1').trim().split(' ');
  } catch {
    return undefined;
  }
  return children.length === 1 && /^\d+$/.test(children[0]!) ? Number(children[0]) : undefined;
}

/**
 * Writes the go byte into the waiter's pipe. Only the waiter holds it (bubblewrap closes its own
 * copies), so it is opened through `/proc/<waiter>/fd/7`, the waiter being the only child of the
 * namespace's init, itself the only child of the outer bubblewrap (`pid`). False
 * when that is not a pipe (nothing is written then).
 */
export function goWaiter(pid: number): boolean {
  const init = onlyChild(pid);
  const waiter = init === undefined ? undefined : onlyChild(init);
  if (waiter === undefined) return false;
  let fd: number;
  try {
    fd = openSync(`/proc/${waiter}/fd/${GO_FD}`, constants.O_WRONLY | constants.O_NONBLOCK);
  } catch {
    return false;
  }
  try {
    if (!fstatSync(fd).isFIFO()) return false;
    return writeSync(fd, 'g') === 1;
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}
