import type { Environment } from '../environment/environment.ts';
import { abortable } from '../internal/abortable.ts';
import type { UnifiedExecProcessManager } from '../manager/process-manager.ts';
import type { TruncationPolicy } from '../output/truncation.ts';
import { applyPatchToolSpec } from '../tools/apply-patch-spec.ts';
import { execCommandToolSpec, type FunctionToolSpec, writeStdinToolSpec } from '../tools/tool-specs.ts';
import { type ApplyPatchHandlerOptions, handleApplyPatch } from './apply-patch-handler.ts';
import { handleExecCommand, type ToolCallOptions } from './exec-command-handler.ts';
import { errorResult, type ToolCallResult } from './tool-call-result.ts';
import type { ToolHooks } from './tool-hooks.ts';
import { handleWriteStdin } from './write-stdin-handler.ts';

/** Options of {@link UnifiedExecTools}. */
export interface UnifiedExecToolsOptions {
  readonly manager: UnifiedExecProcessManager;
  /** One environment or several (the first is the default; several add `environment_id`). */
  readonly environments: Environment | readonly Environment[];
  /** The turn's truncation policy (default 10,000 tokens). */
  readonly turnPolicy?: TruncationPolicy | undefined;
  /** Offer `with_additional_permissions` (default false). */
  readonly execPermissionApprovals?: boolean | undefined;
  /** Show the `shell` parameter (default true). */
  readonly includeShellParameter?: boolean | undefined;
  /** Pre- and post-tool-use callbacks (the original's Bash hooks). */
  readonly hooks?: ToolHooks | undefined;
  /**
   * Offer the `apply_patch` tool and apply `apply_patch <<'EOF' …` command lines instead of
   * running them (default true).
   */
  readonly applyPatch?: boolean | undefined;
  /** Keep each line's `\n` / `\r\n` in patched files (default true, as the original). */
  readonly preserveLineEndings?: boolean | undefined;
}

/** The tool names. */
export type UnifiedExecToolName = 'exec_command' | 'write_stdin' | 'apply_patch';

/**
 * exec_command and write_stdin for one manager: their specs (for the model's tool list) and
 * their handlers, which take the model's JSON arguments and always resolve with the text to
 * send back (plus the structured result on success).
 */
export class UnifiedExecTools {
  /** The manager behind the tools. */
  readonly manager: UnifiedExecProcessManager;
  /** The environments, default first. */
  readonly environments: readonly Environment[];
  readonly #options: UnifiedExecToolsOptions;

  constructor(options: UnifiedExecToolsOptions) {
    this.#options = options;
    this.manager = options.manager;
    this.environments = Array.isArray(options.environments)
      ? [...(options.environments as readonly Environment[])]
      : [options.environments as Environment];
  }

  /** The tool declarations: exec_command (shaped by the environments) and write_stdin. */
  specs(): FunctionToolSpec[] {
    return [
      execCommandToolSpec({
        allowLoginShell: this.environments.some((environment) => environment.settings.allowLoginShell),
        includeShellParameter: this.#options.includeShellParameter ?? true,
        includeEnvironmentId: this.environments.length > 1,
        execPermissionApprovals: this.#options.execPermissionApprovals ?? false,
      }),
      writeStdinToolSpec(),
      ...(this.#options.applyPatch === false ? [] : [applyPatchToolSpec()]),
    ];
  }

  /** What apply_patch (the tool and the exec_command interception) works with. */
  #applyPatchOptions(): ApplyPatchHandlerOptions | undefined {
    if (this.#options.applyPatch === false) return undefined;
    return {
      environments: this.environments,
      approvalPolicy: this.manager.approvalPolicy,
      approver: this.manager.approver,
      preserveLineEndings: this.#options.preserveLineEndings,
      turnPolicy: this.#options.turnPolicy,
      hooks: this.#options.hooks,
    };
  }

  /**
   * Handles an apply_patch call: `input` is the freeform tool's patch text (a string) or the
   * function variant's arguments (`{"input": …}`, object or JSON text with `freeform: false`).
   */
  applyPatch(
    input: unknown,
    options: Pick<ToolCallOptions, 'callId' | 'cancelSignal'> & { readonly freeform?: boolean } = {},
  ): Promise<ToolCallResult> {
    const handler = this.#applyPatchOptions();
    if (handler === undefined) return Promise.resolve(errorResult('unsupported call: apply_patch'));
    return cancellable(options.cancelSignal, () =>
      neverThrows('apply_patch', () => handleApplyPatch(handler, input, options)),
    );
  }

  /** Handles an exec_command call. */
  execCommand(args: unknown, options: ToolCallOptions = {}): Promise<ToolCallResult> {
    return cancellable(options.cancelSignal, () =>
      neverThrows('exec_command', () =>
        handleExecCommand(
          {
            manager: this.manager,
            environments: this.environments,
            execPermissionApprovals: this.#options.execPermissionApprovals,
            turnPolicy: this.#options.turnPolicy,
            hooks: this.#options.hooks,
            applyPatch: this.#applyPatchOptions(),
          },
          args,
          options,
        ),
      ),
    );
  }

  /** Handles a write_stdin call (`cancelSignal` as for exec_command; the process stays stored). */
  writeStdin(args: unknown, options: Pick<ToolCallOptions, 'cancelSignal'> = {}): Promise<ToolCallResult> {
    return cancellable(options.cancelSignal, () =>
      neverThrows('write_stdin', () =>
        handleWriteStdin(
          { manager: this.manager, turnPolicy: this.#options.turnPolicy, hooks: this.#options.hooks },
          args,
          options,
        ),
      ),
    );
  }

  /** Dispatches a call by tool name; an unknown name is answered with an error text. */
  call(name: string, args: unknown, options: ToolCallOptions = {}): Promise<ToolCallResult> {
    if (name === 'exec_command') return this.execCommand(args, options);
    if (name === 'write_stdin') return this.writeStdin(args, options);
    // Through `call` the arguments are the function variant's (`{"input": …}`).
    if (name === 'apply_patch') return this.applyPatch(args, { ...options, freeform: false });
    return Promise.resolve(errorResult(`unsupported call: ${name}`));
  }
}

/**
 * The text of a cancelled call (the original's `aborted by user after {secs:.1}s` for a tool
 * other than the legacy shell tools; at least 0.1 s).
 */
export function abortedCallText(elapsedMs: number): string {
  return `aborted by user after ${Math.max(elapsedMs / 1000, 0.1).toFixed(1)}s`;
}

/** A call's result, or the aborted text as soon as `signal` aborts (the call winds down alone). */
async function cancellable(
  signal: AbortSignal | undefined,
  call: () => Promise<ToolCallResult>,
): Promise<ToolCallResult> {
  const start = performance.now();
  if (signal?.aborted) return errorResult(abortedCallText(0));
  try {
    const result = await abortable(call(), signal);
    return signal?.aborted ? errorResult(abortedCallText(performance.now() - start)) : result;
  } catch {
    return errorResult(abortedCallText(performance.now() - start));
  }
}

/** A handler's result, or (for a bug that threw) the error as text: a tool call never throws. */
async function neverThrows(tool: string, handle: () => Promise<ToolCallResult>): Promise<ToolCallResult> {
  try {
    return await handle();
  } catch (error) {
    return errorResult(`${tool} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}
