import { fileUriToPath, type Logger } from '@execd/protocol';
import { UnifiedExecError } from '../errors.ts';
import type { ExecCommandRequest } from '../manager/requests.ts';
import type { ToolOrchestrator } from '../orchestrator/tool-orchestrator.ts';
import type { UnifiedExecProcess } from '../process/unified-exec-process.ts';
import { buildCommandEnv } from './command-env.ts';
import { launchAttempt } from './launch.ts';
import { shellSnapshotRequest } from './shell-snapshot-request.ts';

/** What {@link openSession} needs besides the request. */
export interface OpenSessionContext {
  /** `CODEX_THREAD_ID`, also the shell-snapshot scope. */
  readonly threadId: string;
  /** `CODEX_SESSION_ID` when set. */
  readonly sessionId: string | undefined;
  /** `CODEX_PERMISSION_PROFILE`: the name of the active permission profile, when one is named. */
  readonly permissionProfileName?: string | undefined;
  /** `CODEX_APPLY_PATCH_PRESERVE_LINE_ENDINGS=1` (Codex 0.169.0 sends it). */
  readonly applyPatchPreserveLineEndings?: boolean | undefined;
  readonly earlyExitGraceMs: number;
  readonly logger: Logger;
}

/**
 * Prepares and starts a command's process (the original's `open_session_with_sandbox`): builds
 * its environment and shell-snapshot request, then lets the orchestrator approve and run the
 * attempts. A sandbox denial that is not retried comes out as `sandboxDenied` whose message is
 * the full output (or `Process exited with code N`); other failures as `createProcess`.
 */
export async function openSession(
  orchestrator: ToolOrchestrator,
  request: ExecCommandRequest,
  context: OpenSessionContext,
): Promise<UnifiedExecProcess> {
  const { environment } = request;
  const { settings } = environment;
  const env = buildCommandEnv(settings.envPolicy, {
    threadId: context.threadId,
    ...(context.sessionId === undefined ? {} : { sessionId: context.sessionId }),
    toolCallId: request.callId,
    ...(context.permissionProfileName === undefined
      ? {}
      : { permissionProfile: context.permissionProfileName }),
    applyPatchPreserveLineEndings: context.applyPatchPreserveLineEndings ?? true,
    // The sandbox policy's network (as the original: the policy, not the attempt, decides).
    networkRestricted: settings.permissionProfile !== 'danger-full-access' && !settings.networkAccess,
  });
  const shellSnapshot = shellSnapshotRequest(request, context.threadId);
  // Runtime PATH folders (the executor's prependPathDirs) go back in front after the restore.
  const pathPrepends =
    shellSnapshot === undefined ? [] : ((await environment.info()).prependPathDirs ?? []).map(fileUriToPath);
  const orchestration = {
    callId: request.callId,
    processId: request.processId,
    command: request.command,
    cwd: request.cwd,
    environmentId: environment.id,
    tty: request.tty,
    sandboxPermissions: request.sandboxPermissions,
    justification: request.justification,
    prefixRule: request.prefixRule,
    additionalPermissions: request.additionalPermissions,
    cancelSignal: request.cancelSignal,
    fileSystemRestricted: environment.settings.permissionProfile !== 'danger-full-access',
    // A managed network confines even a full-access profile.
    sandboxable:
      environment.settings.permissionProfile !== 'danger-full-access' ||
      environment.settings.managedNetwork !== undefined,
  };
  try {
    return await orchestrator.run(orchestration, (attempt) =>
      launchAttempt(
        {
          processId: request.processId,
          command: request.command,
          cwd: request.cwd,
          tty: request.tty,
          env,
          shellSnapshot,
          pathPrepends,
          environment,
          earlyExitGraceMs: context.earlyExitGraceMs,
          approveNetwork: (target) => orchestrator.approveNetwork(orchestration, target),
          networkRuleDomains: orchestrator.execPolicy.policy.compiledNetworkDomains(),
          logger: context.logger,
        },
        attempt,
      ),
    );
  } catch (error) {
    if (UnifiedExecError.isUnifiedExecError(error) && error.kind === 'sandboxDenied' && error.deniedOutput) {
      const { text, exitCode } = error.deniedOutput;
      const message = text.length > 0 ? text : `Process exited with code ${exitCode}`;
      throw UnifiedExecError.sandboxDenied(message, { text, exitCode });
    }
    throw error;
  }
}
