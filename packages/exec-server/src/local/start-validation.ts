import { type ExecParams, fileUriToPath, RpcError } from '@execd/protocol';

/** Longest process id a network-policy callback may carry (the id travels in every callback). */
export const CALLBACK_PROCESS_ID_MAX_BYTES = 256;

/**
 * The checks `process/start` makes before it computes anything (spec §2.4 step 1-2), with the
 * original's -32602 texts.
 */
export function validateStartPreconditions(params: ExecParams, platform: NodeJS.Platform): void {
  const proxy = params.networkProxy;
  if (proxy?.policyDecisionTimeoutMs === 0) {
    throw new RpcError('invalidParams', 'network policy decision callback timeout must be nonzero');
  }
  // Callbacks are on by `policyCallbacks` or by a timeout (the original enables them by the timeout).
  if (proxy?.policyCallbacks === true || proxy?.policyDecisionTimeoutMs !== undefined) {
    const bytes = Buffer.byteLength(params.processId, 'utf8');
    if (bytes === 0 || bytes > CALLBACK_PROCESS_ID_MAX_BYTES) {
      throw new RpcError(
        'invalidParams',
        `callback-enabled process ID must be non-empty and at most ${CALLBACK_PROCESS_ID_MAX_BYTES} bytes`,
      );
    }
  }
  if (platform === 'win32' && params.shellSnapshot !== undefined) {
    throw new RpcError('invalidParams', 'shell snapshots are unsupported on this platform');
  }
}

/** Converts the request's `file://` cwd into a native path, or -32602 with the original's text. */
export function resolveStartCwd(cwd: string): string {
  try {
    return fileUriToPath(cwd);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new RpcError(
      'invalidParams',
      `cwd URI \`${cwd}\` is not valid on this exec-server host: ${reason}`,
      {
        cause: error,
      },
    );
  }
}

/** -32602 `argv must not be empty` (checked after any shell-snapshot rewrite, as the original). */
export function requireArgv(argv: readonly string[]): void {
  if (argv.length === 0) throw new RpcError('invalidParams', 'argv must not be empty');
}
