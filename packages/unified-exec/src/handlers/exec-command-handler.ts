import { randomUUID } from 'node:crypto';
import { posix, resolve } from 'node:path';
import type { Environment } from '../environment/environment.ts';
import { UnifiedExecError } from '../errors.ts';
import { shlexJoin } from '../internal/shlex.ts';
import type { UnifiedExecProcessManager } from '../manager/process-manager.ts';
import { generateChunkId } from '../output/chunk-id.ts';
import type { TruncationPolicy } from '../output/truncation.ts';
import { approxTokenCount } from '../output/truncation.ts';
import { encodeUtf8 } from '../output/utf8.ts';
import { parseExecCommandArgs } from '../tools/exec-command-args.ts';
import { effectiveSandboxPermissions } from '../tools/exec-command-policy.ts';
import { rustDebugString } from '../tools/rust-format.ts';
import { Shell } from '../tools/shell.ts';
import { type ApplyPatchHandlerOptions, interceptApplyPatch } from './apply-patch-handler.ts';
import { errorResult, successResult, type ToolCallResult } from './tool-call-result.ts';
import { postToolUsePayload, runHook, runPreToolUseHook, type ToolHooks } from './tool-hooks.ts';

/** What the exec_command handler needs. */
export interface ExecCommandHandlerOptions {
  readonly manager: UnifiedExecProcessManager;
  /** The environments the model may target; the first is the default. */
  readonly environments: readonly Environment[];
  /** Offer `with_additional_permissions` (default false). */
  readonly execPermissionApprovals?: boolean | undefined;
  /** The turn's truncation policy (default 10,000 tokens). */
  readonly turnPolicy?: TruncationPolicy | undefined;
  /** Pre- and post-tool-use callbacks. */
  readonly hooks?: ToolHooks | undefined;
  /** Intercept apply_patch command lines (`apply_patch <<'EOF' …`) and apply them instead. */
  readonly applyPatch?: ApplyPatchHandlerOptions | undefined;
}

/** Per-call options. */
export interface ToolCallOptions {
  /** The tool call id (default: a fresh UUID). */
  readonly callId?: string | undefined;
  /**
   * Cancels the call (the turn was interrupted): it resolves promptly with the original's
   * `aborted by user after Ns` text; a command already running stays stored.
   */
  readonly cancelSignal?: AbortSignal | undefined;
}

// The environment a call names, read leniently before the real parse (which reports errors).
function requestedEnvironmentId(args: unknown): string | undefined {
  let value = args;
  if (typeof args === 'string') {
    try {
      value = JSON.parse(args);
    } catch {
      return undefined;
    }
  }
  const id = (value as { environment_id?: unknown } | null)?.environment_id;
  return typeof id === 'string' ? id : undefined;
}

/**
 * The exec_command tool (the original's `ExecCommandHandler`): parses the model's JSON
 * arguments, resolves environment, cwd and shell, reserves an id and runs the command through
 * the manager. Never throws: argument and manager errors come back as text
 * (``exec_command failed for `…`: …``), and a sandbox denial as a normal result with its exit code.
 */
export async function handleExecCommand(
  handler: ExecCommandHandlerOptions,
  args: unknown,
  options: ToolCallOptions = {},
): Promise<ToolCallResult> {
  const { manager, environments } = handler;
  const fallback = environments[0];
  if (fallback === undefined) return errorResult('unified exec is unavailable in this session');
  const requestedId = requestedEnvironmentId(args);
  const preselected = environments.find((environment) => environment.id === requestedId) ?? fallback;
  const parsed = parseExecCommandArgs(args, {
    approvalPolicy: manager.approvalPolicy,
    allowLoginShell: preselected.settings.allowLoginShell,
    execPermissionApprovals: handler.execPermissionApprovals ?? false,
    environmentIds: environments.map((environment) => environment.id),
  });
  if (!parsed.ok) return errorResult(parsed.message);
  const parsedArgs = parsed.args;
  const environment =
    environments.find((candidate) => candidate.id === parsedArgs.environment_id) ?? fallback;
  const workdir = parsedArgs.workdir;
  const cwd =
    workdir === undefined || workdir.length === 0
      ? environment.settings.cwd
      : environment.isRemote
        ? posix.resolve(environment.settings.cwd, workdir)
        : resolve(environment.settings.cwd, workdir);
  const shell =
    parsedArgs.shell === undefined ? environment.settings.shell : Shell.fromPath(parsedArgs.shell);
  if (
    environment.isRemote &&
    parsedArgs.shell !== undefined &&
    shell.type !== environment.settings.shell.type
  ) {
    return errorResult(
      `environment \`${environment.id}\` only supports \`${environment.settings.shell.type}\``,
    );
  }
  const command = shell.deriveExecArgs(
    parsedArgs.cmd,
    parsedArgs.login ?? environment.settings.allowLoginShell,
  );
  const callId = options.callId ?? randomUUID();
  const blocked = await runPreToolUseHook(handler.hooks?.preToolUse, {
    tool_name: 'Bash',
    tool_use_id: callId,
    tool_input: { command: parsedArgs.cmd },
  });
  if (blocked !== undefined) return errorResult(blocked);
  const processId = manager.allocateProcessId();
  if (handler.applyPatch !== undefined) {
    // As the original: the id is reserved first and released when the call was a patch.
    const request = { command, cwd, environment, callId, processId };
    const intercepted = await interceptApplyPatch(handler.applyPatch, request).catch((error: unknown) => {
      manager.releaseProcessId(processId);
      throw error;
    });
    if (intercepted !== undefined) {
      manager.releaseProcessId(processId);
      return intercepted;
    }
  }
  try {
    const output = await manager.execCommand({
      callId,
      processId,
      command,
      hookCommand: parsedArgs.cmd,
      cwd,
      environment,
      shellType: shell.type,
      tty: parsedArgs.tty,
      yieldTimeMs: parsedArgs.yield_time_ms,
      maxOutputTokens: parsedArgs.max_output_tokens,
      sandboxPermissions: effectiveSandboxPermissions(parsedArgs),
      justification: parsedArgs.justification,
      prefixRule: parsedArgs.prefix_rule,
      additionalPermissions: parsedArgs.additional_permissions,
      cancelSignal: options.cancelSignal,
    });
    await runHook(handler.hooks?.postToolUse, postToolUsePayload(output, handler.turnPolicy));
    return successResult(output, handler.turnPolicy);
  } catch (error) {
    if (UnifiedExecError.isUnifiedExecError(error) && error.kind === 'sandboxDenied' && error.deniedOutput) {
      // A refused command is terminal, not an error: its output and exit code, no session.
      const { text, exitCode } = error.deniedOutput;
      const denied = {
        callId,
        chunkId: generateChunkId(),
        wallTimeSeconds: 0,
        rawOutput: encodeUtf8(text),
        omittedBytes: 0,
        originalTokenCount: approxTokenCount(text),
        processId: undefined,
        exitCode,
        maxOutputTokens: parsedArgs.max_output_tokens,
        command,
        hookCommand: parsedArgs.cmd,
      };
      await runHook(handler.hooks?.postToolUse, postToolUsePayload(denied, handler.turnPolicy));
      return successResult(denied, handler.turnPolicy);
    }
    const debug = UnifiedExecError.isUnifiedExecError(error)
      ? error.debugText
      : `CreateProcess { message: ${rustDebugString(error instanceof Error ? error.message : String(error))} }`;
    // Codex 0.169.0 refuses a command its exec policy forbids without naming it again.
    if (UnifiedExecError.isUnifiedExecError(error) && error.rejectedByPolicy) {
      return errorResult(`exec_command failed: ${debug}`);
    }
    return errorResult(`exec_command failed for \`${shlexJoin(command)}\`: ${debug}`);
  }
}
