import { ExecError } from '@execd/protocol';
import { planFileSystem } from '../file-system-plan.ts';
import { holdPlaceholders, placeholderRemovals } from '../placeholders.ts';
import { isNetworkDisabled, type SandboxPolicy } from '../policy.ts';
import type { SandboxRootPins } from '../root-pins.ts';
import { buildBwrapArgs } from './bwrap-args.ts';
import { probeBwrap } from './bwrap-probe.ts';
import { bwrapCommandLine, bwrapWaitingLine, type NetworkRoute, sandboxIdentity } from './command-line.ts';
import { deniedFileDir, deniedFileSource } from './denied-file.ts';
import { IGNORE_INTERRUPT_LINE, interruptResetEnv, withInterruptReset } from './interrupt-reset.ts';
import { SECCOMP_FD } from './launcher.ts';
import { locateBwrap } from './locate-bwrap.ts';
import { mountPaths } from './mount-fingerprint.ts';
import { seccompFilterPath } from './seccomp-fd.ts';
import { buildSeccompFilter, type SeccompFilterOptions } from './seccomp-filter.ts';
import { chooseWaiter, type WaiterPayload, type WaiterPrograms } from './waiter.ts';

/** What the Linux sandbox of one command is planned from. */
export interface LinuxSandboxRequest {
  readonly policy: SandboxPolicy;
  readonly command: readonly string[];
  readonly cwd: string;
  /** The command's environment, with the sandbox hints. */
  readonly env: Readonly<Record<string, string>>;
  readonly arg0?: string | undefined;
  readonly tty: boolean;
  readonly bwrapSearchPath?: string | undefined;
  readonly rootPins?: SandboxRootPins | undefined;
  readonly hiddenPaths?: readonly string[] | undefined;
  readonly launcherPreamble?: readonly string[] | Promise<readonly string[]> | undefined;
  /**
   * Set for a `proxied` command routed through a managed network: the proxy's socket folder
   * (masked inside). The sandbox then keeps the network namespace it starts in (no
   * `--unshare-net`) and gets the ProxyRouted seccomp filter.
   */
  readonly proxySocketDir?: string | undefined;
}

/** A checked, planned bubblewrap sandbox waiting only for its command line to be laid out. */
export interface LinuxSandbox {
  /**
   * The launcher argv (see `bwrapCommandLine`); spawn it with `LAUNCHER_ENV`. A routed sandbox
   * needs its route (a started bridge) and refuses to be laid out without one: it would
   * otherwise run in the executor's own network namespace.
   */
  commandLine(route: NetworkRoute | undefined): string[];
  /**
   * The placeholders this sandbox holds: empty host folders bubblewrap makes as mount points for
   * missing protected names, removed when the last sandbox holding one is released.
   */
  readonly placeholders: readonly string[];
  /** Releases the placeholders this sandbox holds (idempotent). */
  release(): Promise<void>;
  /**
   * The sandbox as it can be started before its command (see `waiter.ts`); undefined for a
   * routed sandbox and under an `--argv0` override (the waiter would get it).
   */
  readonly waiting?: WaitingSandbox | undefined;
}

/** A sandbox's waiting form: how to start it without its command, and what to send it. */
export interface WaitingSandbox {
  /** Equal for two plans exactly when their command lines differ only in env and argv. */
  readonly identity: string;
  /** This plan's command, for a waiter of the same identity. */
  readonly payload: WaiterPayload;
  /** The host paths its mounts are made from and on (see `mountFingerprint`). */
  readonly mountPaths: readonly string[];
  /**
   * The launcher argv of a waiter of this sandbox (spawn it with `LAUNCHER_ENV`), running the
   * waiter it can (see `chooseWaiter`); `unsupported` when it can run none of `programs`.
   */
  line(payloadPath: string, programs: WaiterPrograms): string[];
}

/**
 * The environment as bubblewrap hands it to the program it runs: `PWD` set to the `--chdir`
 * folder (else where it started), replacing a `PWD` of the command's in place or added last.
 */
function withBubblewrapPwd(
  env: Readonly<Record<string, string>>,
  flags: readonly string[],
  cwd: string,
): Record<string, string> {
  const chdir = flags.indexOf('--chdir');
  return { ...env, PWD: chdir >= 0 ? flags[chdir + 1]! : cwd };
}

/** The filter file of each set of options a plan asked for (a filter depends on nothing else). */
const filterPaths = new Map<string, string>();

/** The seccomp filter for `options`, built once per process, as a path bubblewrap's launcher opens. */
function filterPathFor(options: Required<Omit<SeccompFilterOptions, 'littleEndian'>>): string {
  const { arch, networkDisabled, proxyRouted, denyUserNamespaces } = options;
  const key = `${arch} ${networkDisabled} ${proxyRouted} ${denyUserNamespaces}`;
  let path = filterPaths.get(key);
  if (path === undefined) {
    path = seccompFilterPath(buildSeccompFilter(options));
    filterPaths.set(key, path);
  }
  return path;
}

function unsupported(message: string): ExecError {
  return new ExecError('unsupported', message);
}

/**
 * Finds and probes bubblewrap, plans the file system, builds the flags and the seccomp filter:
 * everything that can fail (`unsupported`, `invalidParams`) happens here, before a bridge starts.
 */
export async function planLinuxSandbox(request: LinuxSandboxRequest): Promise<LinuxSandbox> {
  if (process.platform !== 'linux')
    throw unsupported(`the linuxSeccomp sandbox needs Linux, not ${process.platform}`);
  const { policy } = request;
  const untrustedDirs = [policy.cwd, request.cwd, ...policy.writableRoots.map((root) => root.path)];
  const bwrap = locateBwrap({ searchPath: request.bwrapSearchPath, untrustedDirs });
  if (bwrap === undefined) {
    throw unsupported(
      'bubblewrap (bwrap) was not found on PATH outside the workspace in a root-owned, not world-writable folder; install bubblewrap',
    );
  }
  const caps = await probeBwrap(bwrap);
  const plan = await planFileSystem(policy, { rootPins: request.rootPins, hiddenPaths: request.hiddenPaths });
  const proxyRouted = request.proxySocketDir !== undefined;
  const networkDisabled = isNetworkDisabled(policy);
  const deniedFile = plan.denied?.some((item) => item.kind === 'file') ? await deniedFileSource() : undefined;
  // The denied-file source's folder is masked in every sandbox once it exists, denied files or not.
  const sourceDir = deniedFile?.dir ?? deniedFileDir();
  const maskedDirs = [
    ...(request.proxySocketDir === undefined ? [] : [request.proxySocketDir]),
    ...(sourceDir === undefined ? [] : [sourceDir]),
  ];
  const flags = buildBwrapArgs({
    plan,
    // A routed command lives in the bridge's network namespace: its only way out is the proxy.
    networkDisabled: networkDisabled && !proxyRouted,
    newSession: !request.tty,
    mountProc: caps.mountProc,
    disableUserns: caps.disableUserns,
    seccompFd: SECCOMP_FD,
    maskedDirs,
    ...(deniedFile === undefined ? {} : { deniedFile: deniedFile.file }),
  });
  if (request.arg0 !== undefined && request.arg0 !== request.command[0]) {
    if (!caps.argv0)
      throw unsupported('an arg0 override under bubblewrap needs bwrap 0.9 or later (--argv0)');
    flags.splice(flags.length - 1, 0, '--argv0', request.arg0); // before the closing `--`
  }
  const filterPath = filterPathFor({
    arch: caps.arch,
    networkDisabled,
    proxyRouted,
    denyUserNamespaces: !caps.disableUserns,
  });
  // A terminal's ^C must reach the command, not kill bubblewrap: see IGNORE_INTERRUPT_LINE.
  // Only where the reset can run inside (the whole disk readable) and argv[0] is the program's.
  const fullRead = plan.fullDiskWrite || plan.readableRoots === undefined || plan.readableRoots.includes('/');
  const resetEnv =
    request.tty && fullRead && !flags.includes('--argv0') ? await interruptResetEnv() : undefined;
  const resetCommand = resetEnv === undefined ? undefined : withInterruptReset(resetEnv, request.command);
  // Awaited last (before any placeholder is held): the caller may still be making these lines.
  const launcherPreamble = (await request.launcherPreamble) ?? [];
  const parts = {
    filterPath,
    preamble: [...(resetCommand === undefined ? [] : [IGNORE_INTERRUPT_LINE]), ...launcherPreamble],
    bwrap: caps.path,
    flags,
    env: request.env,
    command: resetCommand ?? request.command,
  };
  const placeholders = [
    ...plan.writableRoots.flatMap(({ readOnly }) =>
      readOnly.filter((item) => item.type === 'missing').map((item) => item.path),
    ),
    ...(plan.denied ?? []).filter((item) => item.kind === 'missing').map((item) => item.path),
  ];
  const release = holdPlaceholders(placeholders);
  // A placeholder another sandbox just stopped using may still be on its way out: start only
  // once it is gone, so that bubblewrap makes (and mounts over) a new one.
  await placeholderRemovals(placeholders);
  return {
    commandLine: (route) => {
      if (proxyRouted && route === undefined)
        throw new Error('sandboxing: a proxy-routed sandbox needs its bridge route');
      return bwrapCommandLine(parts, proxyRouted ? route : undefined);
    },
    placeholders,
    release,
    ...(proxyRouted || flags.includes('--argv0')
      ? {}
      : {
          waiting: {
            identity: sandboxIdentity(parts),
            mountPaths: mountPaths(flags),
            payload: {
              env: withBubblewrapPwd(request.env, flags, request.cwd),
              command: request.command,
              resetInterrupt: resetCommand !== undefined,
            },
            line: (payloadPath: string, programs: WaiterPrograms) => {
              const waiter = chooseWaiter(programs, fullRead);
              if (waiter === undefined)
                throw unsupported('no waiter program (perl or GNU env) for this sandbox');
              return bwrapWaitingLine(parts, payloadPath, waiter);
            },
          },
        }),
  };
}
