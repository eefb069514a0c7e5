import { describe, expect, test } from 'vitest';
import { buildSeccompFilter, type SeccompArch } from './seccomp-filter.ts';

// A classic-BPF interpreter for exactly the instructions seccomp filters use, so the generated
// program is checked by running it, not by comparing bytes.
interface Call {
  readonly nr: number;
  readonly arch?: number;
  readonly args?: readonly bigint[];
}

const ALLOW = 0x7fff0000;
const EPERM = 0x00050001;
const ENOSYS = 0x00050026;
const KILL = 0x80000000;
const ARCH = { x86_64: 0xc000003e, aarch64: 0xc00000b7 } as const;

function seccompData(call: Call, arch: SeccompArch): DataView {
  const view = new DataView(new ArrayBuffer(64));
  view.setInt32(0, call.nr, true);
  view.setUint32(4, call.arch ?? ARCH[arch], true);
  (call.args ?? []).forEach((arg, i) => {
    view.setBigUint64(16 + 8 * i, arg, true);
  });
  return view;
}

function run(program: Uint8Array, call: Call, arch: SeccompArch): number {
  const code = new DataView(program.buffer, program.byteOffset, program.byteLength);
  const data = seccompData(call, arch);
  let a = 0;
  for (let pc = 0; pc * 8 < program.length; pc++) {
    const op = code.getUint16(pc * 8, true);
    const jt = code.getUint8(pc * 8 + 2);
    const jf = code.getUint8(pc * 8 + 3);
    const k = code.getUint32(pc * 8 + 4, true);
    if (op === 0x20) a = data.getUint32(k, true);
    else if (op === 0x54) a = (a & k) >>> 0;
    else if (op === 0x15) pc += a === k ? jt : jf;
    else if (op === 0x35) pc += a >= k ? jt : jf;
    else if (op === 0x45) pc += (a & k) !== 0 ? jt : jf;
    else if (op === 0x06) return k;
    else throw new Error(`unexpected BPF opcode ${op.toString(16)}`);
  }
  throw new Error('fell off the end of the program');
}

const NR = {
  x86_64: {
    read: 0,
    ptrace: 101,
    keyctl: 250,
    io_uring_setup: 425,
    socket: 41,
    socketpair: 53,
    connect: 42,
    bind: 49,
    sendto: 44,
    shutdown: 48,
    unshare: 272,
    clone: 56,
    clone3: 435,
    bpf: 321,
    userfaultfd: 323,
    perf_event_open: 298,
    fchmod: 91,
    fchmodat: 268,
    openat: 257,
    mknodat: 259,
    openat2: 437,
  },
  aarch64: {
    read: 63,
    ptrace: 117,
    keyctl: 219,
    io_uring_setup: 425,
    socket: 198,
    socketpair: 199,
    connect: 203,
    bind: 200,
    sendto: 206,
    shutdown: 210,
    unshare: 97,
    clone: 220,
    clone3: 435,
    bpf: 280,
    userfaultfd: 282,
    perf_event_open: 241,
    fchmod: 52,
    fchmodat: 53,
    openat: 56,
    mknodat: 33,
    openat2: 437,
  },
} as const;

describe.each(['x86_64', 'aarch64'] as const)('seccomp filter (%s)', (arch) => {
  const nr = NR[arch];
  const open = buildSeccompFilter({ arch, networkDisabled: false });
  const closed = buildSeccompFilter({ arch, networkDisabled: true });
  const verdict = (program: Uint8Array, call: Call) => run(program, call, arch);

  test('is a whole number of sock_filter entries and allows ordinary calls', () => {
    expect(open.length % 8).toBe(0);
    expect(verdict(open, { nr: nr.read })).toBe(ALLOW);
    expect(verdict(closed, { nr: nr.read })).toBe(ALLOW);
  });

  test('always denies ptrace, io_uring and the keyring with EPERM', () => {
    for (const program of [open, closed]) {
      expect(verdict(program, { nr: nr.ptrace })).toBe(EPERM);
      expect(verdict(program, { nr: nr.io_uring_setup })).toBe(EPERM);
      expect(verdict(program, { nr: nr.keyctl })).toBe(EPERM);
    }
  });

  test('always denies bpf, userfaultfd and perf_event_open', () => {
    for (const program of [open, closed]) {
      expect(verdict(program, { nr: nr.bpf })).toBe(EPERM);
      expect(verdict(program, { nr: nr.userfaultfd })).toBe(EPERM);
      expect(verdict(program, { nr: nr.perf_event_open })).toBe(EPERM);
    }
  });

  test('set-uid and set-gid modes are refused on every mode-setting call; plain modes pass', () => {
    for (const program of [open, closed]) {
      expect(verdict(program, { nr: nr.fchmod, args: [3n, BigInt(0o4755)] })).toBe(EPERM);
      expect(verdict(program, { nr: nr.fchmod, args: [3n, BigInt(0o2755)] })).toBe(EPERM);
      expect(verdict(program, { nr: nr.fchmod, args: [3n, BigInt(0o1777)] })).toBe(ALLOW);
      expect(verdict(program, { nr: nr.fchmodat, args: [0n, 0n, BigInt(0o6755)] })).toBe(EPERM);
      expect(verdict(program, { nr: nr.fchmodat, args: [0n, 0n, BigInt(0o755)] })).toBe(ALLOW);
      expect(verdict(program, { nr: nr.openat, args: [0n, 0n, BigInt(0o101), BigInt(0o4755)] })).toBe(EPERM);
      expect(verdict(program, { nr: nr.openat, args: [0n, 0n, BigInt(0o101), BigInt(0o644)] })).toBe(ALLOW);
      expect(verdict(program, { nr: nr.mknodat, args: [0n, 0n, BigInt(0o104755)] })).toBe(EPERM);
      expect(verdict(program, { nr: nr.openat2 })).toBe(ENOSYS);
    }
  });

  test('kills a syscall from another ABI', () => {
    expect(verdict(open, { nr: nr.read, arch: 0x40000003 })).toBe(KILL);
  });

  test('network on: sockets are not filtered', () => {
    expect(verdict(open, { nr: nr.socket, args: [2n, 1n] })).toBe(ALLOW);
    expect(verdict(open, { nr: nr.connect })).toBe(ALLOW);
  });

  test('network off: connect and bind are denied, only AF_UNIX stream/seqpacket sockets exist', () => {
    expect(verdict(closed, { nr: nr.connect })).toBe(EPERM);
    expect(verdict(closed, { nr: nr.bind })).toBe(EPERM);
    expect(verdict(closed, { nr: nr.socket, args: [2n, 1n] })).toBe(EPERM); // AF_INET
    expect(verdict(closed, { nr: nr.socket, args: [10n, 1n] })).toBe(EPERM); // AF_INET6
    expect(verdict(closed, { nr: nr.socket, args: [16n, 3n] })).toBe(EPERM); // AF_NETLINK
    expect(verdict(closed, { nr: nr.socket, args: [1n, 1n] })).toBe(ALLOW); // AF_UNIX stream
    expect(verdict(closed, { nr: nr.socket, args: [1n, 0x80801n] })).toBe(ALLOW); // | CLOEXEC | NONBLOCK
    expect(verdict(closed, { nr: nr.socket, args: [1n, 5n] })).toBe(ALLOW); // seqpacket
    expect(verdict(closed, { nr: nr.socket, args: [1n, 2n] })).toBe(EPERM); // datagram
    expect(verdict(closed, { nr: nr.socketpair, args: [1n, 1n] })).toBe(ALLOW);
    expect(verdict(closed, { nr: nr.socketpair, args: [1n, 2n] })).toBe(EPERM);
    expect(verdict(closed, { nr: nr.shutdown })).toBe(ALLOW);
  });

  test('network off: sendto only without a destination address', () => {
    expect(verdict(closed, { nr: nr.sendto, args: [3n, 0x1000n, 1n, 0n, 0n, 0n] })).toBe(ALLOW);
    expect(verdict(closed, { nr: nr.sendto, args: [3n, 0x1000n, 1n, 0n, 0x7ffe0000n, 16n] })).toBe(EPERM);
    expect(verdict(closed, { nr: nr.sendto, args: [3n, 0x1000n, 1n, 0n, 0x100000000n, 16n] })).toBe(EPERM);
  });

  test('proxy-routed: only AF_INET/AF_INET6 sockets and AF_UNIX stream/seqpacket socketpairs', () => {
    const routed = buildSeccompFilter({ arch, networkDisabled: true, proxyRouted: true });
    expect(verdict(routed, { nr: nr.read })).toBe(ALLOW);
    expect(verdict(routed, { nr: nr.ptrace })).toBe(EPERM);
    expect(verdict(routed, { nr: nr.socket, args: [2n, 1n] })).toBe(ALLOW); // AF_INET stream
    expect(verdict(routed, { nr: nr.socket, args: [2n, 2n] })).toBe(ALLOW); // AF_INET datagram
    expect(verdict(routed, { nr: nr.socket, args: [10n, 0x80801n] })).toBe(ALLOW); // AF_INET6
    expect(verdict(routed, { nr: nr.socket, args: [1n, 1n] })).toBe(EPERM); // AF_UNIX: no host sockets
    expect(verdict(routed, { nr: nr.socket, args: [1n, 5n] })).toBe(EPERM);
    expect(verdict(routed, { nr: nr.socket, args: [16n, 3n] })).toBe(EPERM); // AF_NETLINK
    expect(verdict(routed, { nr: nr.socket, args: [17n, 3n] })).toBe(EPERM); // AF_PACKET
    expect(verdict(routed, { nr: nr.socketpair, args: [1n, 1n] })).toBe(ALLOW);
    expect(verdict(routed, { nr: nr.socketpair, args: [1n, 5n] })).toBe(ALLOW);
    expect(verdict(routed, { nr: nr.socketpair, args: [1n, 2n] })).toBe(EPERM); // datagram
    expect(verdict(routed, { nr: nr.socketpair, args: [2n, 1n] })).toBe(EPERM);
    // The bridge's ports are reached with ordinary TCP calls.
    expect(verdict(routed, { nr: nr.connect })).toBe(ALLOW);
    expect(verdict(routed, { nr: nr.bind })).toBe(ALLOW);
    expect(verdict(routed, { nr: nr.sendto, args: [3n, 0x1000n, 1n, 0n, 0x7ffe0000n, 16n] })).toBe(ALLOW);
    expect(buildSeccompFilter({ arch, networkDisabled: false, proxyRouted: true })).toEqual(routed);
  });

  test('user namespaces are denied only when asked for', () => {
    const program = buildSeccompFilter({ arch, networkDisabled: false, denyUserNamespaces: true });
    expect(verdict(program, { nr: nr.unshare, args: [0x10000000n] })).toBe(EPERM);
    expect(verdict(program, { nr: nr.unshare, args: [0x20000n] })).toBe(ALLOW); // CLONE_NEWNS alone
    expect(verdict(program, { nr: nr.clone, args: [0x10000000n | 17n] })).toBe(EPERM);
    expect(verdict(program, { nr: nr.clone, args: [17n] })).toBe(ALLOW);
    expect(verdict(program, { nr: nr.clone3 })).toBe(ENOSYS);
    expect(verdict(open, { nr: nr.unshare, args: [0x10000000n] })).toBe(ALLOW);
  });
});

test('x86_64: the x32 ABI is killed', () => {
  const program = buildSeccompFilter({ arch: 'x86_64', networkDisabled: false });
  expect(run(program, { nr: 0x40000000 + 101 }, 'x86_64')).toBe(KILL);
});

test('big-endian encoding swaps the fields', () => {
  const little = buildSeccompFilter({ arch: 'x86_64', networkDisabled: true, littleEndian: true });
  const big = buildSeccompFilter({ arch: 'x86_64', networkDisabled: true, littleEndian: false });
  expect(big.length).toBe(little.length);
  expect(big[0]).toBe(little[1]);
  expect(big[4]).toBe(little[7]);
});
