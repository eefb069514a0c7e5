import { RpcError, type SandboxContext } from '@execd/protocol';
import { spawnPipe, spawnPty } from '@execd/pty-utils';
import type { LocalSpawnRequest, LocalSpawnResult, SandboxDenialCheck } from './spawner.ts';

/** True when a sandbox context asks for no confinement at all (so an unsandboxed spawn is exact). */
function needsSandbox(sandbox: SandboxContext | undefined): boolean {
  if (sandbox === undefined || sandbox.mode === 'forbid') return false;
  return sandbox.mode === 'require' || sandbox.profile !== 'danger-full-access';
}

/**
 * Launches a child with `@execd/pty-utils`: a PTY for `tty`, else pipes (stdin piped or
 * /dev/null). A request that needs a sandbox is refused with -32602 until `@execd/sandboxing`
 * provides the launcher.
 */
export async function defaultSpawner(request: LocalSpawnRequest): Promise<LocalSpawnResult> {
  if (needsSandbox(request.sandbox)) {
    throw new RpcError('invalidParams', 'sandboxed launches are not available on this exec-server host');
  }
  const common = {
    argv: request.argv,
    cwd: request.cwd,
    env: request.env,
    arg0: request.arg0,
    drainTimeoutMs: request.drainTimeoutMs,
  };
  const process = request.tty ? await spawnPty(common) : await spawnPipe({ ...common, stdin: request.stdin });
  return { process, sandboxType: 'none' };
}

/** Denial detection for unsandboxed children: never denied. */
export const notSandboxDenied: SandboxDenialCheck = () => false;
