import type { ShellSnapshotRequest } from '@execd/protocol';
import type { ExecCommandRequest } from '../manager/requests.ts';

/** Shells whose state a snapshot can capture and restore. */
const SNAPSHOT_SHELLS: readonly string[] = ['bash', 'zsh', 'sh'];

/**
 * The shell-snapshot request of a command, or undefined when it does not qualify (as the
 * original's `shell_snapshot_request`): the environment enables snapshots, the command runs in
 * the environment's own cwd, through bash/zsh/sh, as a login command (`-lc`). The scope is
 * `{threadId}:{environmentId}`, so one capture serves every command of the thread there.
 */
export function shellSnapshotRequest(
  request: Pick<ExecCommandRequest, 'environment' | 'command' | 'cwd' | 'shellType'>,
  threadId: string,
): ShellSnapshotRequest | undefined {
  const { environment, command } = request;
  const shellPath = command[0];
  if (
    !environment.settings.shellSnapshot ||
    request.cwd !== environment.settings.cwd ||
    shellPath === undefined
  )
    return undefined;
  if (!SNAPSHOT_SHELLS.includes(request.shellType) || command[1] !== '-lc') return undefined;
  return { scopeId: `${threadId}:${environment.id}`, shell: { name: request.shellType, path: shellPath } };
}
