import { RpcError, type ShellSnapshotRequest } from '@execd/protocol';
import { MAX_SNAPSHOT_SCOPE_BYTES } from './limits.ts';
import { type SnapshotShell, toSnapshotShell } from './shell-kind.ts';

/**
 * Whether a `process/start` with `shellSnapshot` gets a snapshot:
 * - `apply`: yes, for this shell; the shell's `[path, "-lc", script, …]` starts at `shellStart`
 *   of the prepared argv;
 * - `skip`: no, silently (argv is not `[shell.path, "-lc", script, …]`); run the command unmodified;
 * - `invalid`: reject the start with `error` (-32602, the original's exact text).
 */
export type SnapshotCheck =
  | { readonly status: 'apply'; readonly shell: SnapshotShell; readonly shellStart: number }
  | { readonly status: 'skip' }
  | { readonly status: 'invalid'; readonly error: RpcError };

const LOGIN_FLAG = '-lc';

/**
 * Validates a snapshot request against the command, in the original's order: the scope length
 * first (even when the argv would be skipped), then the argv shape, then the shell name.
 * `preparedArgv` is the command after any sandbox wrapping; it must end with `argv` (default: `argv`).
 */
export function checkSnapshotRequest(
  request: ShellSnapshotRequest,
  argv: readonly string[],
  preparedArgv: readonly string[] = argv,
): SnapshotCheck {
  const scopeBytes = Buffer.byteLength(request.scopeId, 'utf8');
  if (scopeBytes === 0 || scopeBytes > MAX_SNAPSHOT_SCOPE_BYTES) {
    return invalid(`shell snapshot scope must be non-empty and at most ${MAX_SNAPSHOT_SCOPE_BYTES} bytes`);
  }
  if (argv.length < 3 || argv[0] !== request.shell.path || argv[1] !== LOGIN_FLAG) return { status: 'skip' };
  if (!endsWith(preparedArgv, argv)) return { status: 'skip' };
  const shell = toSnapshotShell(request.shell.name);
  if (shell === undefined) {
    return invalid(`shell snapshots are unsupported for shell \`${request.shell.name}\``);
  }
  return { status: 'apply', shell, shellStart: preparedArgv.length - argv.length };
}

function invalid(message: string): SnapshotCheck {
  return { status: 'invalid', error: new RpcError('invalidParams', message) };
}

function endsWith(whole: readonly string[], tail: readonly string[]): boolean {
  if (tail.length > whole.length) return false;
  const offset = whole.length - tail.length;
  return tail.every((item, index) => whole[offset + index] === item);
}
