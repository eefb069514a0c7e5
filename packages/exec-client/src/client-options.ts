import { type CodecName, ExecError, type Logger, NOOP_LOGGER } from '@execd/protocol';
import type { NetworkPolicyDecider } from '@execd/protocol/contract';
import { type AcceptedChannelSource, INITIAL_RESUME_MESSAGE } from './accepted-channel-source.ts';
import {
  CLIENT_KEEPALIVE_INTERVAL_MS,
  CONNECT_TIMEOUT_MS,
  ENVIRONMENT_INFO_TIMEOUT_MS,
  ENVIRONMENT_STATUS_TIMEOUT_MS,
  GAP_FILL_DELAY_MS,
  INITIALIZE_TIMEOUT_MS,
  RECOVERY_INITIAL_DELAY_MS,
  RECOVERY_MAX_DELAY_MS,
  SESSION_RECOVERY_TIMEOUT_MS,
} from './limits.ts';
import type { NetworkPolicyDecisionListener } from './network-policy.ts';
import type { StdioCommand } from './stdio-channel.ts';

/** Options of `ExecServerClient.connect`. Every duration has the original's default. */
export interface ExecServerClientOptions {
  /** `ws://host:port` of the exec-server (or give `command`). */
  readonly url?: string | undefined;
  /**
   * Instead of `url`: spawn this command and speak the protocol over its stdin/stdout, e.g.
   * `['ssh', 'host', 'execd-server', '--listen', 'stdio']` (an argv, or `{argv, cwd, env}`).
   * Always the JSON codec. The server ends the session at EOF, so a lost command is not
   * resumed: every process fails and later calls reject (see the README).
   */
  readonly command?: readonly string[] | StdioCommand | undefined;
  /** Bearer token for servers that require one. */
  readonly token?: string | undefined;
  /** `msgpack` (default; execd servers) or `json` (the original's codec; any server). */
  readonly codec?: CodecName | undefined;
  /** Sent in `initialize` (default `execd-client`). */
  readonly clientName?: string | undefined;
  /** Resume this detached session instead of creating one (fails with -32010 while it is attached). */
  readonly resumeSessionId?: string | undefined;
  readonly connectTimeoutMs?: number | undefined;
  readonly initializeTimeoutMs?: number | undefined;
  readonly environmentInfoTimeoutMs?: number | undefined;
  readonly environmentStatusTimeoutMs?: number | undefined;
  /** Give up resuming after a lost connection after this long (default 25 s, inside the server's 30 s). */
  readonly recoveryTimeoutMs?: number | undefined;
  /** First pause between reconnect attempts (default 100 ms), doubling up to `recoveryMaxDelayMs`. */
  readonly recoveryInitialDelayMs?: number | undefined;
  readonly recoveryMaxDelayMs?: number | undefined;
  /** Client ping interval; two silent intervals drop the connection (default 15 s; 0 = off). */
  readonly keepaliveIntervalMs?: number | undefined;
  /** How long a hole in pushed events may stay open before a `process/read` fills it (default 50 ms). */
  readonly gapFillDelayMs?: number | undefined;
  /** Largest inbound frame (default 64 MiB). */
  readonly maxFrameBytes?: number | undefined;
  /**
   * Answers the server's `network/policyRequest` for processes started without their own
   * `networkPolicyDecider`. Absent (and no per-start decider): the client answers -32601 and the
   * server denies the connection without remembering the answer.
   */
  readonly onNetworkPolicyRequest?: NetworkPolicyDecider | undefined;
  /** Called with every `network/policyDecision` the server pushes (best effort, unsequenced). */
  readonly onNetworkPolicyDecision?: NetworkPolicyDecisionListener | undefined;
  readonly logger?: Logger | undefined;
}

/** The options with every default filled in. */
export interface ResolvedClientOptions {
  readonly url: string | undefined;
  readonly command: StdioCommand | undefined;
  readonly token: string | undefined;
  readonly codec: CodecName;
  readonly clientName: string;
  readonly resumeSessionId: string | undefined;
  readonly connectTimeoutMs: number;
  readonly initializeTimeoutMs: number;
  readonly environmentInfoTimeoutMs: number;
  readonly environmentStatusTimeoutMs: number;
  readonly recoveryTimeoutMs: number;
  readonly recoveryInitialDelayMs: number;
  readonly recoveryMaxDelayMs: number;
  readonly keepaliveIntervalMs: number;
  readonly gapFillDelayMs: number;
  readonly maxFrameBytes: number | undefined;
  readonly onNetworkPolicyRequest: NetworkPolicyDecider | undefined;
  readonly onNetworkPolicyDecision: NetworkPolicyDecisionListener | undefined;
  readonly logger: Logger;
  /** An accepted client's channels (the executor dialled the host); then no `url` nor `command`. */
  readonly channelSource: AcceptedChannelSource | undefined;
}

function duration(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0) {
    throw new RangeError(`${name} must be a non-negative number of milliseconds, got ${value}`);
  }
  return value;
}

function resolveCommand(command: ExecServerClientOptions['command']): StdioCommand | undefined {
  if (command === undefined) return undefined;
  const resolved: StdioCommand = 'argv' in command ? command : { argv: command as readonly string[] };
  if (resolved.argv.length === 0) throw new RangeError('command must not be empty');
  return resolved;
}

/** Fills in defaults and checks every duration. */
export function resolveClientOptions(
  options: ExecServerClientOptions,
  channelSource?: AcceptedChannelSource,
): ResolvedClientOptions {
  const command = resolveCommand(options.command);
  if (channelSource !== undefined) {
    if (command !== undefined || options.url !== undefined) {
      throw new RangeError('an accepted client takes neither url nor command');
    }
    if (options.resumeSessionId !== undefined) throw new ExecError('protocol', INITIAL_RESUME_MESSAGE);
  } else if ((command === undefined) === (options.url === undefined)) {
    throw new RangeError('give exactly one of url and command');
  }
  const codec = options.codec ?? (command === undefined ? 'msgpack' : 'json');
  if (codec !== 'msgpack' && codec !== 'json') {
    throw new RangeError(`codec must be 'msgpack' or 'json', got ${String(codec)}`);
  }
  if (command !== undefined && codec !== 'json') {
    throw new RangeError(`a stdio command speaks the json codec only, got codec ${codec}`);
  }
  return {
    url: options.url,
    command,
    token: options.token,
    codec,
    clientName: options.clientName ?? 'execd-client',
    resumeSessionId: options.resumeSessionId,
    connectTimeoutMs: duration('connectTimeoutMs', options.connectTimeoutMs, CONNECT_TIMEOUT_MS),
    initializeTimeoutMs: duration('initializeTimeoutMs', options.initializeTimeoutMs, INITIALIZE_TIMEOUT_MS),
    environmentInfoTimeoutMs: duration(
      'environmentInfoTimeoutMs',
      options.environmentInfoTimeoutMs,
      ENVIRONMENT_INFO_TIMEOUT_MS,
    ),
    environmentStatusTimeoutMs: duration(
      'environmentStatusTimeoutMs',
      options.environmentStatusTimeoutMs,
      ENVIRONMENT_STATUS_TIMEOUT_MS,
    ),
    recoveryTimeoutMs: duration('recoveryTimeoutMs', options.recoveryTimeoutMs, SESSION_RECOVERY_TIMEOUT_MS),
    recoveryInitialDelayMs: duration(
      'recoveryInitialDelayMs',
      options.recoveryInitialDelayMs,
      RECOVERY_INITIAL_DELAY_MS,
    ),
    recoveryMaxDelayMs: duration('recoveryMaxDelayMs', options.recoveryMaxDelayMs, RECOVERY_MAX_DELAY_MS),
    keepaliveIntervalMs: duration(
      'keepaliveIntervalMs',
      options.keepaliveIntervalMs,
      CLIENT_KEEPALIVE_INTERVAL_MS,
    ),
    gapFillDelayMs: duration('gapFillDelayMs', options.gapFillDelayMs, GAP_FILL_DELAY_MS),
    maxFrameBytes: options.maxFrameBytes,
    onNetworkPolicyRequest: options.onNetworkPolicyRequest,
    onNetworkPolicyDecision: options.onNetworkPolicyDecision,
    logger: options.logger ?? NOOP_LOGGER,
    channelSource,
  };
}
