import { randomUUID } from 'node:crypto';
import { parseApplyPatchInvocation } from '../apply-patch/invocation.ts';
import { type PatchRunResult, runPatch, VERIFICATION_FAILED_PREFIX } from '../apply-patch/patch-runner.ts';
import type { Environment } from '../environment/environment.ts';
import type { Approver } from '../orchestrator/approval.ts';
import type { TruncationPolicy } from '../output/truncation.ts';
import { encodeUtf8 } from '../output/utf8.ts';
import { PARSE_ERROR_PREFIX, parseFailure } from '../tools/exec-command-args.ts';
import type { ApprovalPolicy } from '../tools/exec-command-policy.ts';
import { readDocument, stringField } from '../tools/serde-fields.ts';
import { errorResult, successResult, type ToolCallResult } from './tool-call-result.ts';
import { runHook, runPreToolUseHook, type ToolHooks } from './tool-hooks.ts';

/** What the apply_patch tool (and its interception in exec_command) needs. */
export interface ApplyPatchHandlerOptions {
  /** The environments; the first is the default (the tool applies patches there). */
  readonly environments: readonly Environment[];
  readonly approvalPolicy: ApprovalPolicy;
  /** Asked about patches outside the writable roots under asking policies (default: deny). */
  readonly approver?: Approver | undefined;
  /** Keep each line's `\n` / `\r\n` in updated files (default true, as the original). */
  readonly preserveLineEndings?: boolean | undefined;
  /** The turn's truncation policy (for the exec_command form's result text). */
  readonly turnPolicy?: TruncationPolicy | undefined;
  /**
   * PreToolUse / PostToolUse of the apply_patch tool (`tool_name: 'apply_patch'`, the patch text
   * as `command`), as Codex 0.169.0 sends them; not used by exec_command's interception.
   */
  readonly hooks?: ToolHooks | undefined;
}

function toolResult(result: PatchRunResult): ToolCallResult {
  return result.success ? { text: result.text, success: true } : errorResult(result.text);
}

// The function variant's `{"input": "…"}`; the freeform variant's input is the patch itself.
function patchInput(args: unknown): { ok: true; input: string } | { ok: false; message: string } {
  if (typeof args === 'object' && args !== null && !Array.isArray(args)) {
    const input = (args as { input?: unknown }).input;
    if (typeof input === 'string') return { ok: true, input };
    args = JSON.stringify(args);
  }
  if (typeof args !== 'string') return { ok: false, message: `${PARSE_ERROR_PREFIX}invalid type` };
  try {
    const raw = readDocument(args, 'ApplyPatchToolArgs', { input: stringField(false) }, ['input']);
    return { ok: true, input: raw.input as string };
  } catch (error) {
    return parseFailure(error);
  }
}

/** The text when a patch names an environment but the turn has only one (Codex 0.169.0). */
export const ENVIRONMENT_SELECTION_UNAVAILABLE =
  'apply_patch environment selection is unavailable for this turn';

/**
 * The apply_patch tool (the original's `ApplyPatchHandler`): `input` is the freeform patch text
 * (a string) or the function variant's arguments (`{"input": "…"}`, object or JSON text). The
 * patch is applied in the cwd of the environment its `*** Environment ID:` line names (with
 * several environments), else of the default one. Never throws.
 */
export async function handleApplyPatch(
  handler: ApplyPatchHandlerOptions,
  input: unknown,
  options: { readonly callId?: string | undefined; readonly freeform?: boolean | undefined } = {},
): Promise<ToolCallResult> {
  const environment = handler.environments[0];
  if (environment === undefined) return errorResult('apply_patch is unavailable in this session');
  let patch: string;
  if (options.freeform ?? typeof input === 'string') {
    patch = String(input);
  } else {
    const parsed = patchInput(input);
    if (!parsed.ok) return errorResult(parsed.message);
    patch = parsed.input;
  }
  const callId = options.callId ?? randomUUID();
  const hookInput = {
    tool_name: 'apply_patch',
    tool_use_id: callId,
    tool_input: { command: patch },
  } as const;
  const blocked = await runPreToolUseHook(handler.hooks?.preToolUse, hookInput);
  if (blocked !== undefined) return errorResult(blocked);
  const invocation = await parseApplyPatchInvocation(['apply_patch', patch], environment.settings.cwd);
  if (invocation.kind === 'invalid') return errorResult(`${VERIFICATION_FAILED_PREFIX}${invocation.message}`);
  if (invocation.kind === 'none') return errorResult('apply_patch handler received non-apply_patch input');
  const requested = invocation.parsed.environmentId;
  let target = environment;
  if (requested !== undefined) {
    if (handler.environments.length < 2) return errorResult(ENVIRONMENT_SELECTION_UNAVAILABLE);
    const named = handler.environments.find((candidate) => candidate.id === requested);
    if (named === undefined) return errorResult(`unknown turn environment id \`${requested}\``);
    target = named;
  }
  const result = await runPatch(invocation.parsed, target.settings.cwd, {
    environment: target,
    approvalPolicy: handler.approvalPolicy,
    approver: handler.approver,
    preserveLineEndings: handler.preserveLineEndings,
    callId,
  });
  // Only an applied patch's answer is a tool response (a verification failure is not).
  if (result.success) await runHook(handler.hooks?.postToolUse, { ...hookInput, tool_response: result.text });
  return toolResult(result);
}

/**
 * exec_command's interception (the original's `intercept_apply_patch`): when `command` is an
 * apply_patch call (`apply_patch <<'EOF' … EOF` and the other recognised forms), the patch is
 * applied instead of spawning anything and the answer is the tool text wrapped as a finished
 * exec_command output; undefined lets the command run.
 */
export async function interceptApplyPatch(
  handler: ApplyPatchHandlerOptions,
  request: {
    readonly command: readonly string[];
    readonly cwd: string;
    readonly environment: Environment;
    readonly callId: string;
    readonly processId: number;
  },
): Promise<ToolCallResult | undefined> {
  const invocation = await parseApplyPatchInvocation(request.command, request.cwd);
  if (invocation.kind === 'none') return undefined;
  if (invocation.kind === 'invalid') return errorResult(`${VERIFICATION_FAILED_PREFIX}${invocation.message}`);
  const result = await runPatch(invocation.parsed, invocation.cwd, {
    environment: request.environment,
    approvalPolicy: handler.approvalPolicy,
    approver: handler.approver,
    preserveLineEndings: handler.preserveLineEndings,
    callId: request.callId,
    processId: request.processId,
  });
  if (!result.success) return errorResult(result.text);
  return successResult(
    {
      callId: request.callId,
      chunkId: '',
      wallTimeSeconds: 0,
      rawOutput: encodeUtf8(result.text),
      omittedBytes: 0,
      originalTokenCount: undefined,
      processId: undefined,
      exitCode: undefined,
      maxOutputTokens: undefined,
      command: request.command,
    },
    handler.turnPolicy,
  );
}
