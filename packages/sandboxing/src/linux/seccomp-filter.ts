import { BpfAssembler } from '../internal/bpf-assembler.ts';

/** CPU architectures the filter knows syscall numbers for. */
export type SeccompArch = 'x86_64' | 'aarch64';

/** `AUDIT_ARCH_*` values (<linux/audit.h>): the filter refuses every other ABI. */
const AUDIT_ARCH: Readonly<Record<SeccompArch, number>> = { x86_64: 0xc000003e, aarch64: 0xc00000b7 };

/** x86_64 syscalls with this bit set are the x32 ABI, a second syscall table the filter must not miss. */
const X32_SYSCALL_BIT = 0x40000000;

/** Syscall numbers from <asm/unistd_64.h> (x86_64) and <asm-generic/unistd.h> (aarch64). */
const SYSCALLS: Readonly<Record<SeccompArch, Readonly<Record<string, number>>>> = {
  x86_64: {
    ptrace: 101,
    process_vm_readv: 310,
    process_vm_writev: 311,
    io_uring_setup: 425,
    io_uring_enter: 426,
    io_uring_register: 427,
    add_key: 248,
    request_key: 249,
    keyctl: 250,
    bpf: 321,
    userfaultfd: 323,
    perf_event_open: 298,
    openat2: 437,
    socket: 41,
    socketpair: 53,
    connect: 42,
    accept: 43,
    accept4: 288,
    bind: 49,
    listen: 50,
    sendto: 44,
    unshare: 272,
    clone: 56,
    clone3: 435,
  },
  aarch64: {
    ptrace: 117,
    process_vm_readv: 270,
    process_vm_writev: 271,
    io_uring_setup: 425,
    io_uring_enter: 426,
    io_uring_register: 427,
    add_key: 217,
    request_key: 218,
    keyctl: 219,
    bpf: 280,
    userfaultfd: 282,
    perf_event_open: 241,
    openat2: 437,
    socket: 198,
    socketpair: 199,
    connect: 203,
    accept: 202,
    accept4: 242,
    bind: 200,
    listen: 201,
    sendto: 206,
    unshare: 97,
    clone: 220,
    clone3: 435,
  },
};

/**
 * Denied in every sandbox: reading or writing other processes' memory (`ptrace`,
 * `process_vm_*`), io_uring (whose operations bypass syscall filtering), as the original; and,
 * beyond it, the kernel keyring (`add_key`, `keyctl`, `request_key`), which a root sandbox
 * would otherwise share with the host's root (its session keyring is inherited), and the calls
 * kernel exploit chains favour that no build or test needs: `bpf` (verifier bugs),
 * `userfaultfd` (stalls kernel copies to win races), `perf_event_open` (a long CVE record and
 * kernel address leaks).
 */
export const ALWAYS_DENIED_SYSCALLS: readonly string[] = [
  'ptrace',
  'process_vm_readv',
  'process_vm_writev',
  'io_uring_setup',
  'io_uring_enter',
  'io_uring_register',
  'add_key',
  'keyctl',
  'request_key',
  'bpf',
  'userfaultfd',
  'perf_event_open',
];

/**
 * Calls that set a file mode, with the index of their mode argument: refused when the mode has
 * the set-user-ID or set-group-ID bit. A sandboxed command runs as uid 0 mapped to the executor's
 * uid; files it creates belong to that uid on the host, so with a root executor `cp /bin/bash
 * /tmp/x; chmod 4755 /tmp/x` would mint a set-uid-root binary any local user could run. Plain
 * modes (755, 644, the sticky bit) stay allowed. `openat2` keeps its mode in memory the filter
 * cannot read: it answers ENOSYS and libc falls back to `openat`.
 */
const SETID_MODE_SYSCALLS: Readonly<Record<SeccompArch, Readonly<Record<number, number>>>> = {
  // chmod, fchmod, fchmodat, fchmodat2, open, openat, creat, mknod, mknodat
  x86_64: { 90: 1, 91: 1, 268: 2, 452: 2, 2: 2, 257: 3, 85: 1, 133: 1, 259: 2 },
  // fchmod, fchmodat, fchmodat2, openat, mknodat (aarch64 has no legacy chmod/open/creat/mknod)
  aarch64: { 52: 1, 53: 2, 452: 2, 56: 3, 33: 2 },
};

/** S_ISUID | S_ISGID. */
const SETID_MODE_BITS = 0o6000;

/**
 * Denied when the network is off: every way to reach a socket by address. `--unshare-net`
 * already isolates IP and abstract Unix sockets; these close path-based Unix sockets (a host
 * daemon's socket under a readable path). `socket`/`socketpair` are allowed only for AF_UNIX
 * stream/seqpacket sockets (pipes between the command's own processes), and `sendto` only
 * without a destination address (plain `send`).
 */
export const NETWORK_DENIED_SYSCALLS: readonly string[] = ['connect', 'accept', 'accept4', 'bind', 'listen'];

/** Socket constants from <linux/socket.h>/<linux/net.h>. */
const AF_UNIX = 1;
const AF_INET = 2;
const AF_INET6 = 10;
const SOCK_STREAM = 1;
const SOCK_SEQPACKET = 5;
/** `type` carries SOCK_NONBLOCK/SOCK_CLOEXEC above the low four bits. */
const SOCK_TYPE_MASK = 0xf;
const CLONE_NEWUSER = 0x10000000;

/** Return values from <linux/seccomp.h> and errno values. */
const SECCOMP_RET_ALLOW = 0x7fff0000;
const SECCOMP_RET_ERRNO = 0x00050000;
const SECCOMP_RET_KILL_PROCESS = 0x80000000;
const EPERM = 1;
const ENOSYS = 38;

/** `struct seccomp_data` offsets: nr, arch, then six u64 args from byte 16 (low word first). */
const NR_OFFSET = 0;
const ARCH_OFFSET = 4;
const argLow = (index: number): number => 16 + index * 8;
const argHigh = (index: number): number => 16 + index * 8 + 4;

/** Options of {@link buildSeccompFilter}. */
export interface SeccompFilterOptions {
  readonly arch: SeccompArch;
  /** Add the network rules ({@link NETWORK_DENIED_SYSCALLS} and the socket checks). */
  readonly networkDisabled: boolean;
  /**
   * The managed-network (`proxied`) rules instead, the original's ProxyRouted mode: `socket` only
   * for AF_INET/AF_INET6 (their only destinations are the proxy bridge's ports on the loopback of
   * the command's own network namespace), `socketpair` only for AF_UNIX stream/seqpacket. No
   * AF_UNIX socket can be created, so no host Unix socket (a daemon's, or the proxy's own) can be
   * reached. Wins over `networkDisabled`.
   */
  readonly proxyRouted?: boolean;
  /** Deny creating user namespaces (for a bubblewrap without `--disable-userns`). */
  readonly denyUserNamespaces?: boolean;
  /** Byte order of the encoded program (default: this host's). */
  readonly littleEndian?: boolean;
}

/** The seccomp architecture of a Node `process.arch`, or undefined when the filter has no table for it. */
export function seccompArchOf(nodeArch: string = process.arch): SeccompArch | undefined {
  if (nodeArch === 'x64') return 'x86_64';
  if (nodeArch === 'arm64') return 'aarch64';
  return undefined;
}

/**
 * Builds the classic-BPF seccomp program bubblewrap loads with `--seccomp FD` (an array of
 * `struct sock_filter`). Denied calls fail with EPERM; a syscall from another ABI (i386 via
 * `int 0x80`, x32, arm32) kills the process, since the filter's numbers would not apply to it.
 */
export function buildSeccompFilter(options: SeccompFilterOptions): Uint8Array {
  const nr = SYSCALLS[options.arch];
  const asm = new BpfAssembler();
  asm.load(ARCH_OFFSET).jumpEqual(AUDIT_ARCH[options.arch], '', 'kill').load(NR_OFFSET);
  if (options.arch === 'x86_64') asm.jumpGreaterOrEqual(X32_SYSCALL_BIT, 'kill');
  for (const name of ALWAYS_DENIED_SYSCALLS) asm.jumpEqual(nr[name]!, 'deny');
  const setidCalls = Object.entries(SETID_MODE_SYSCALLS[options.arch]);
  for (const [syscall, modeArg] of setidCalls) asm.jumpEqual(Number(syscall), `mode${modeArg}`);
  asm.jumpEqual(nr.openat2!, 'enosys');
  if (options.denyUserNamespaces === true) {
    asm.jumpEqual(nr.unshare!, 'flags').jumpEqual(nr.clone!, 'flags').jumpEqual(nr.clone3!, 'nosys');
  }
  const network = options.proxyRouted === true ? 'proxyRouted' : options.networkDisabled ? 'off' : 'full';
  if (network === 'off') {
    for (const name of NETWORK_DENIED_SYSCALLS) asm.jumpEqual(nr[name]!, 'deny');
    asm.jumpEqual(nr.socket!, 'socket').jumpEqual(nr.socketpair!, 'socket').jumpEqual(nr.sendto!, 'sendto');
  } else if (network === 'proxyRouted') {
    asm.jumpEqual(nr.socket!, 'inet').jumpEqual(nr.socketpair!, 'socket');
  }
  asm.ret(SECCOMP_RET_ALLOW);
  if (options.denyUserNamespaces === true) {
    // unshare(flags) and clone(flags, ...): deny CLONE_NEWUSER. clone3 keeps flags in memory the
    // filter cannot read, so it answers ENOSYS and libc falls back to clone.
    asm.label('flags').load(argLow(0)).jumpAnySet(CLONE_NEWUSER, 'deny', 'allow');
    asm.label('nosys').ret(SECCOMP_RET_ERRNO | ENOSYS);
  }
  if (network === 'proxyRouted') {
    // socket(domain, ...): AF_INET or AF_INET6 only.
    asm.label('inet').load(argLow(0)).jumpEqual(AF_INET, 'allow').jumpEqual(AF_INET6, 'allow', 'deny');
  }
  if (network !== 'full') {
    // socket(domain, type, ...) / socketpair(domain, type, ...): AF_UNIX stream or seqpacket only.
    // Datagram sockets are refused because sendmsg() to a path needs no connect().
    asm.label('socket').load(argLow(0)).jumpEqual(AF_UNIX, '', 'deny');
    asm
      .load(argLow(1))
      .and(SOCK_TYPE_MASK)
      .jumpEqual(SOCK_STREAM, 'allow')
      .jumpEqual(SOCK_SEQPACKET, 'allow', 'deny');
  }
  if (network === 'off') {
    // sendto(fd, buf, len, flags, dest_addr, addrlen): only a NULL dest_addr (64-bit pointer).
    asm
      .label('sendto')
      .load(argLow(4))
      .jumpEqual(0, '', 'deny')
      .load(argHigh(4))
      .jumpEqual(0, 'allow', 'deny');
  }
  for (const modeArg of new Set(setidCalls.map(([, arg]) => arg))) {
    asm.label(`mode${modeArg}`).load(argLow(modeArg)).jumpAnySet(SETID_MODE_BITS, 'deny', 'allow');
  }
  asm.label('enosys').ret(SECCOMP_RET_ERRNO | ENOSYS);
  asm.label('allow').ret(SECCOMP_RET_ALLOW);
  asm.label('deny').ret(SECCOMP_RET_ERRNO | EPERM);
  asm.label('kill').ret(SECCOMP_RET_KILL_PROCESS);
  return asm.assemble(options.littleEndian ?? new Uint8Array(new Uint16Array([1]).buffer)[0] === 1);
}
