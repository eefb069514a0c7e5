import { randomUUID } from 'node:crypto';
import {
  abortedBy,
  type EnvironmentInfo,
  type ExecEnvPolicy,
  type ExecParams,
  fromUtf8,
  pathToFileUri,
  type SandboxParam,
  type SandboxType,
  TransportClosedError,
} from '@execd/protocol';
import type { RemoteProcess } from './remote-process.ts';

/**
 * Default cap on the bytes `run()` keeps per stream (stdout, stderr). A command that prints more
 * keeps running; the rest is dropped and `truncated` is set (execa's `maxBuffer` does the same job).
 */
export const RUN_MAX_OUTPUT_BYTES: number = 16 * 1024 * 1024;

/**
 * The default environment of `run()`: the executor's variables minus the secret-looking ones,
 * as Codex's default `shell_environment_policy` (`inherit = "all"`, default excludes on).
 */
export const RUN_DEFAULT_ENV_POLICY: ExecEnvPolicy = {
  inherit: 'all',
  ignoreDefaultExcludes: false,
  exclude: [],
  set: {},
  includeOnly: [],
};

/** Options of `ExecServerClient.run`. */
export interface RunOptions {
  /** Working directory on the executor: an absolute path or a `file://` URI (default: the server's cwd). */
  readonly cwd?: string | undefined;
  /** Variables set for the child, over `envPolicy`'s environment. */
  readonly env?: Readonly<Record<string, string>> | undefined;
  /** Base environment (default {@link RUN_DEFAULT_ENV_POLICY}). */
  readonly envPolicy?: ExecEnvPolicy | undefined;
  /** Kill the process (SIGKILL to its group) after this many ms; the result has `timedOut: true`. */
  readonly timeoutMs?: number | undefined;
  /** Kill the process when aborted; `run()` then rejects with an `aborted` ExecError. */
  readonly cancelSignal?: AbortSignal | undefined;
  /** Run in a PTY: everything arrives on `stdout` (the terminal), `stderr` stays empty. */
  readonly tty?: boolean | undefined;
  /** A command string runs as `[shell, '-lc', command]` (default true), else `[shell, '-c', command]`. */
  readonly login?: boolean | undefined;
  /** Shell for a command string (default: the executor's shell from `initialize`, else `/bin/sh`). */
  readonly shell?: string | undefined;
  /** Sandbox intent, as `process/start`'s `sandbox`. */
  readonly sandbox?: SandboxParam | undefined;
  /** Bytes kept per stream (default {@link RUN_MAX_OUTPUT_BYTES}). */
  readonly maxOutputBytes?: number | undefined;
}

/** What `run()` resolves with: the whole output, decoded as UTF-8, and how the process ended. */
export interface RunResult {
  readonly processId: string;
  /** The argv that ran (a command string expanded to its shell invocation). */
  readonly argv: readonly string[];
  readonly stdout: string;
  readonly stderr: string;
  /** The raw bytes behind `stdout` / `stderr`. */
  readonly stdoutBytes: Uint8Array;
  readonly stderrBytes: Uint8Array;
  /** Exit code (`128 + N` when killed by signal N, e.g. 137 after a timeout). */
  readonly exitCode: number;
  /** The process was killed because `timeoutMs` passed. */
  readonly timedOut: boolean;
  /** A stream printed more than `maxOutputBytes`; the rest was dropped. */
  readonly truncated: boolean;
  readonly sandboxType: SandboxType | undefined;
  readonly sandboxDenied: boolean;
}

/** What `run` needs from the client. */
export interface RunHost {
  start(params: ExecParams): Promise<RemoteProcess>;
  readonly initializeEnvironmentInfo: EnvironmentInfo | undefined;
}

/** A bounded byte sink for one stream. */
class Collected {
  readonly #chunks: Uint8Array[] = [];
  #bytes = 0;
  truncated = false;
  constructor(readonly max: number) {}

  push(chunk: Uint8Array): void {
    const room = this.max - this.#bytes;
    if (chunk.byteLength > room) this.truncated = true;
    const kept = chunk.byteLength > room ? chunk.subarray(0, room) : chunk;
    if (kept.byteLength === 0) return;
    this.#chunks.push(kept);
    this.#bytes += kept.byteLength;
  }

  bytes(): Uint8Array {
    const out = new Uint8Array(this.#bytes);
    let offset = 0;
    for (const chunk of this.#chunks) {
      out.set(chunk, offset);
      offset += chunk.byteLength;
    }
    return out;
  }
}

function toCwdUri(cwd: string | undefined, info: EnvironmentInfo | undefined): string {
  if (cwd === undefined) {
    if (info?.cwd !== undefined) return info.cwd;
    throw new RangeError('run(): cwd is required (this server reported no default cwd)');
  }
  if (cwd.startsWith('file://')) return cwd;
  if (!cwd.startsWith('/')) throw new RangeError(`run(): cwd must be absolute or a file:// URI, got ${cwd}`);
  return pathToFileUri(cwd);
}

function toArgv(command: string | readonly string[], options: RunOptions, info: EnvironmentInfo | undefined) {
  if (typeof command !== 'string') {
    if (command.length === 0) throw new RangeError('run(): argv must not be empty');
    return [...command];
  }
  const shell = options.shell ?? info?.shell.path ?? '/bin/sh';
  return [shell, options.login === false ? '-c' : '-lc', command];
}

/**
 * Runs one command to completion on the server and collects its output (the client's
 * `run()`). The process is killed on timeout or abort and is never left running: whatever ends
 * `run()` early terminates it first.
 */
export async function runCommand(
  host: RunHost,
  command: string | readonly string[],
  options: RunOptions = {},
): Promise<RunResult> {
  const { cancelSignal, timeoutMs } = options;
  if (timeoutMs !== undefined && (!Number.isFinite(timeoutMs) || timeoutMs < 0)) {
    throw new RangeError(`run(): timeoutMs must be a non-negative number, got ${timeoutMs}`);
  }
  if (cancelSignal?.aborted) throw abortedBy(cancelSignal, 'run()');
  const info = host.initializeEnvironmentInfo;
  const argv = toArgv(command, options, info);
  const params: ExecParams = {
    processId: `run-${randomUUID()}`,
    argv,
    cwd: toCwdUri(options.cwd, info),
    envPolicy: options.envPolicy ?? RUN_DEFAULT_ENV_POLICY,
    shellSnapshot: undefined,
    env: { ...options.env },
    tty: options.tty ?? false,
    pipeStdin: false,
    arg0: undefined,
    sandbox: options.sandbox,
    enforceManagedNetwork: false,
    managedNetwork: undefined,
    networkProxy: undefined,
  };
  const max = options.maxOutputBytes ?? RUN_MAX_OUTPUT_BYTES;
  const stdout = new Collected(max);
  const stderr = new Collected(max);
  const proc = await host.start(params);
  let killing: Promise<unknown> | undefined;
  // After a kill the events still run to `closed`: the exit code and the last output arrive.
  const kill = (): Promise<unknown> => {
    killing ??= proc.terminate().catch(() => undefined);
    return killing;
  };
  // One controller ends the event stream whichever comes first: timeout or the caller's abort.
  const stop = new AbortController();
  let timedOut = false;
  const timer =
    timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          void kill();
        }, timeoutMs);
  const onAbort = (): void => {
    stop.abort(abortedBy(cancelSignal!, 'run()'));
    void kill();
  };
  cancelSignal?.addEventListener('abort', onAbort, { once: true });
  // Aborted while the start was in flight: the listener above will not fire.
  if (cancelSignal?.aborted) onAbort();
  let exitCode: number | undefined;
  let sandboxDenied = false;
  let closed = false;
  try {
    for await (const event of proc.events({ cancelSignal: stop.signal })) {
      if (event.type === 'output') (event.stream === 'stderr' ? stderr : stdout).push(event.chunk);
      else if (event.type === 'exited') {
        exitCode = event.exitCode;
        sandboxDenied = event.sandboxDenied === true;
      } else if (event.type === 'closed') closed = true;
      else if (event.type === 'failed') throw new TransportClosedError(undefined, event.message);
    }
    // The stream ends early only when the client was closed under it.
    if (!closed || exitCode === undefined) {
      throw new TransportClosedError(undefined, `exec-server client closed while ${params.processId} ran`);
    }
  } catch (error) {
    await kill();
    throw error;
  } finally {
    clearTimeout(timer);
    cancelSignal?.removeEventListener('abort', onAbort);
    await proc.close();
  }
  const stdoutBytes = stdout.bytes();
  const stderrBytes = stderr.bytes();
  return {
    processId: params.processId,
    argv,
    stdout: fromUtf8(stdoutBytes),
    stderr: fromUtf8(stderrBytes),
    stdoutBytes,
    stderrBytes,
    exitCode,
    timedOut,
    truncated: stdout.truncated || stderr.truncated,
    sandboxType: proc.sandboxType,
    sandboxDenied,
  };
}
