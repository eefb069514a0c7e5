import { commandEnvFlags, withLauncher } from './launcher.ts';
import { type WaiterProgram, waiterCommand, withWaitingLauncher } from './waiter.ts';

/**
 * How a `proxied` command reaches its managed network: a started bridge's `prefixArgv`
 * (`nsenter … --`, entering the network namespace the bridge holds) and `env` (the proxy
 * variables). See `NetworkBridge` in `@execd/network-proxy`.
 */
export interface NetworkRoute {
  readonly prefixArgv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

/** Everything of a bubblewrap command line but its network route. */
export interface BwrapCommandParts {
  /** `/proc/<pid>/fd/<n>` of the seccomp program; the launcher opens it on fd 9. */
  readonly filterPath: string;
  /** Launcher lines run before the fd sweep (limits: see `launcherLimitLines`). */
  readonly preamble: readonly string[];
  /** Absolute path of the probed bubblewrap. */
  readonly bwrap: string;
  /** bubblewrap's flags up to and including `--` (`buildBwrapArgs`, plus `--argv0`). */
  readonly flags: readonly string[];
  /** The command's environment (with the sandbox hints). */
  readonly env: Readonly<Record<string, string>>;
  readonly command: readonly string[];
}

/**
 * The one place that lays out a sandboxed command line:
 * `launcher -> [bridge prefix] -> bwrap --clearenv --setenv… <flags> -- <command…>`.
 *
 * The launcher opens the seccomp filter before the bridge prefix runs (from inside a
 * user-namespace bridge, what a non-root executor gets, `/proc/<executor>/fd/N` could not be
 * opened); `nsenter` passes fd 9 on to bwrap. The proxy variables join the command's environment
 * as `--setenv`s (they win over the command's own); the launcher and nsenter keep the fixed
 * launcher environment. A routed command's flags carry no `--unshare-net`: the sandbox keeps the
 * bridge's network namespace.
 */
export function bwrapCommandLine(parts: BwrapCommandParts, route?: NetworkRoute): string[] {
  const env = route === undefined ? parts.env : { ...parts.env, ...route.env };
  const inner = [
    ...(route?.prefixArgv ?? []),
    parts.bwrap,
    ...commandEnvFlags(env),
    ...parts.flags,
    ...parts.command,
  ];
  return withLauncher(parts.filterPath, inner, parts.preamble);
}

/**
 * What makes two sandboxes the same: every part of the command line but the command's
 * environment and argv (a prepared sandbox serves a command only when its fresh plan has the
 * same identity).
 */
export function sandboxIdentity(parts: BwrapCommandParts): string {
  return JSON.stringify([parts.filterPath, parts.preamble, parts.bwrap, parts.flags]);
}

/**
 * The command line of a sandbox prepared before its command (see `waiter.ts`):
 * `waiting launcher -> bwrap --clearenv <flags> -- <waiter>`; never routed through a bridge.
 */
export function bwrapWaitingLine(
  parts: BwrapCommandParts,
  payloadPath: string,
  program: WaiterProgram,
): string[] {
  const inner = [parts.bwrap, '--clearenv', ...parts.flags, ...waiterCommand(program)];
  return withWaitingLauncher(parts.filterPath, payloadPath, inner, parts.preamble);
}
