import type { SandboxType } from '@execd/protocol';
import { type Logger, type SpawnedProcess, spawnPipe, spawnPty } from '@execd/pty-utils';
import { prepareSandboxCommand, type SandboxSelection } from './prepare.ts';

/** One command to launch, sandboxed or not (the original's `SpawnRequest`). */
export interface SpawnRequest {
  /** Program and arguments; never empty. */
  readonly command: readonly string[];
  /** Absolute working directory. */
  readonly cwd: string;
  /** The command's entire environment (the sandbox's hints are added to a copy). */
  readonly env: Readonly<Record<string, string>>;
  /** What the command sees as `argv[0]`. */
  readonly arg0?: string | undefined;
  /** The resolved policy and the sandbox type to apply; undefined runs unsandboxed. */
  readonly sandbox?: SandboxSelection | undefined;
  /** Spawn in a PTY (stdin always writable). */
  readonly tty: boolean;
  /** Pipes only: keep stdin writable; otherwise stdin is /dev/null. */
  readonly stdinOpen: boolean;
  /** PTY size (default 80x24). */
  readonly cols?: number | undefined;
  readonly rows?: number | undefined;
  /** After exit, wait at most this long for output to drain (pty-utils default otherwise). */
  readonly drainTimeoutMs?: number | undefined;
  /** Where to look for `bwrap` (default: this process's `PATH`). */
  readonly bwrapSearchPath?: string | undefined;
  readonly logger?: Logger | undefined;
}

/** A launched child and the sandbox it actually runs under. */
export interface SpawnResult {
  readonly process: SpawnedProcess;
  readonly sandboxType: SandboxType;
}

/**
 * Launches a command (the original's `spawn_process`): wraps it in its sandbox, then spawns it
 * with pty-utils, in a PTY when `tty`, else on pipes with stdin piped or /dev/null.
 * Rejects with `unsupported` when the sandbox cannot run here, `spawnFailed` when the program
 * cannot be started.
 */
export async function spawnProcess(request: SpawnRequest): Promise<SpawnResult> {
  const prepared = await prepareSandboxCommand(request);
  request.logger?.debug('sandboxing: spawn', { sandboxType: prepared.sandboxType, argv: prepared.argv });
  const options = {
    argv: prepared.argv,
    cwd: request.cwd,
    env: prepared.env,
    arg0: prepared.arg0,
    drainTimeoutMs: request.drainTimeoutMs,
    logger: request.logger,
  };
  const process = request.tty
    ? await spawnPty({ ...options, cols: request.cols, rows: request.rows })
    : await spawnPipe({ ...options, stdin: request.stdinOpen ? 'pipe' : 'null' });
  return { process, sandboxType: prepared.sandboxType };
}
