import { ExecError } from '@execd/protocol';
import type { FileSystemPlan } from '../file-system-plan.ts';

/** The system's Seatbelt launcher; only this absolute path is trusted (never a PATH lookup). */
export const SANDBOX_EXEC_PATH = '/usr/bin/sandbox-exec';

/**
 * What every Seatbelt sandbox allows, whatever the profile: run and fork programs, signal and
 * inspect its own processes, write /dev/null, use terminals, POSIX semaphores/shm, and read the
 * sysctls common tools (uname, Python, Node, Go runtimes) ask for.
 */
const BASE_POLICY = `(version 1)
(deny default)
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
(allow user-preference-read)
(allow file-write-data (require-all (path "/dev/null") (vnode-type CHARACTER-DEVICE)))
(allow pseudo-tty)
(allow file-read* file-write* file-ioctl (literal "/dev/ptmx"))
(allow file-read* file-write* file-ioctl (regex #"^/dev/ttys[0-9]+$"))
(allow ipc-posix-sem)
(allow ipc-posix-shm-read* ipc-posix-shm-write-data ipc-posix-shm-write-create ipc-posix-shm-write-unlink)
(allow mach-lookup
  (global-name "com.apple.system.opendirectoryd.libinfo")
  (global-name "com.apple.system.logger")
  (global-name "com.apple.logd"))
(allow sysctl-read
  (sysctl-name "hw.activecpu")
  (sysctl-name "hw.byteorder")
  (sysctl-name "hw.cachelinesize_compat")
  (sysctl-name "hw.cputype")
  (sysctl-name "hw.logicalcpu_max")
  (sysctl-name "hw.machine")
  (sysctl-name "hw.memsize")
  (sysctl-name "hw.ncpu")
  (sysctl-name "hw.pagesize_compat")
  (sysctl-name "hw.physicalcpu_max")
  (sysctl-name-prefix "hw.optional.")
  (sysctl-name-prefix "hw.perflevel")
  (sysctl-name "kern.argmax")
  (sysctl-name "kern.hostname")
  (sysctl-name "kern.maxfilesperproc")
  (sysctl-name "kern.osproductversion")
  (sysctl-name "kern.osrelease")
  (sysctl-name "kern.ostype")
  (sysctl-name "kern.osversion")
  (sysctl-name "kern.usrstack64")
  (sysctl-name "kern.version")
  (sysctl-name "sysctl.proc_cputype")
  (sysctl-name-prefix "kern.proc.pid."))
`;

/** Network rules added only when the network is on. */
const NETWORK_POLICY = `(allow network-outbound)
(allow network-inbound)
(allow system-socket)
(allow mach-lookup
  (global-name "com.apple.SystemConfiguration.configd")
  (global-name "com.apple.dnssd.service")
  (global-name "com.apple.trustd.agent"))
`;

/** A Seatbelt profile and the `-D` parameters it refers to. */
export interface SeatbeltPolicy {
  /** The SBPL text for `sandbox-exec -p`. */
  readonly text: string;
  /** `NAME=value` pairs, passed as `-DNAME=value`; paths travel here, never spliced into the text. */
  readonly params: readonly (readonly [string, string])[];
}

function writeRules(plan: FileSystemPlan, params: [string, string][]): string {
  if (plan.fullDiskWrite) return '(allow file-write*)\n';
  if (plan.writableRoots.length === 0) return '';
  const clauses: string[] = [];
  const anchors: string[] = [];
  plan.writableRoots.forEach(({ root, readOnly }, i) => {
    const name = `WRITABLE_ROOT_${i}`;
    params.push([name, root]);
    anchors.push(`(literal (param "${name}"))`);
    const exceptions = readOnly.map((item, j) => {
      const carve = `${name}_RO_${j}`;
      params.push([carve, item.path]);
      anchors.push(`(literal (param "${carve}"))`);
      // `subpath` also matches a path that does not exist yet, so missing ones cannot be created.
      return ` (require-not (subpath (param "${carve}")))`;
    });
    clauses.push(
      exceptions.length === 0
        ? `  (subpath (param "${name}"))`
        : `  (require-all (subpath (param "${name}"))${exceptions.join('')})`,
    );
  });
  // The roots and carve-outs themselves cannot be deleted or renamed away.
  return `(allow file-write*\n${clauses.join('\n')})\n(deny file-write-unlink\n  ${anchors.join('\n  ')})\n`;
}

/** Denied paths: neither read nor written, after every allow (the last matching rule wins). */
function denyRules(plan: FileSystemPlan, params: [string, string][]): string {
  const denied = plan.denied ?? [];
  if (denied.length === 0) return '';
  const clauses = denied.map(({ path }, i) => {
    params.push([`DENIED_${i}`, path]);
    return `  (subpath (param "DENIED_${i}"))`;
  });
  return `(deny file-read* file-write*\n${clauses.join('\n')})\n`;
}

/**
 * The Seatbelt profile for a plan (spec §5.4): `(deny default)` base, read everywhere, write in
 * the writable roots except their protected carve-outs, denied paths neither, the network section
 * only when allowed. A restricted-read plan is refused (`unsupported`): Seatbelt here has no list
 * of the system paths programs need, and reading everything would not be what was asked.
 */
export function buildSeatbeltPolicy(plan: FileSystemPlan, networkDisabled: boolean): SeatbeltPolicy {
  if (plan.readableRoots !== undefined && !plan.readableRoots.includes('/'))
    throw new ExecError(
      'unsupported',
      'restricted read access is not implemented for the macosSeatbelt sandbox',
    );
  const params: [string, string][] = [];
  const rules = `(allow file-read*)\n${writeRules(plan, params)}${denyRules(plan, params)}`;
  const text = `${BASE_POLICY}${rules}${networkDisabled ? '' : NETWORK_POLICY}`;
  return { text, params };
}

/** `sandbox-exec -p <policy> -DNAME=value… -- <command…>`. */
export function buildSeatbeltArgv(policy: SeatbeltPolicy, command: readonly string[]): string[] {
  return [
    SANDBOX_EXEC_PATH,
    '-p',
    policy.text,
    ...policy.params.map(([key, value]) => `-D${key}=${value}`),
    '--',
    ...command,
  ];
}
