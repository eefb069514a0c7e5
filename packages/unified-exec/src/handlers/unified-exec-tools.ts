import type { Environment } from '../environment/environment.ts';
import type { UnifiedExecProcessManager } from '../manager/process-manager.ts';
import type { TruncationPolicy } from '../output/truncation.ts';
import { execCommandToolSpec, type FunctionToolSpec, writeStdinToolSpec } from '../tools/tool-specs.ts';
import { handleExecCommand, type ToolCallOptions } from './exec-command-handler.ts';
import { errorResult, type ToolCallResult } from './tool-call-result.ts';
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
}

/** The two tool names. */
export type UnifiedExecToolName = 'exec_command' | 'write_stdin';

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
    ];
  }

  /** Handles an exec_command call. */
  execCommand(args: unknown, options: ToolCallOptions = {}): Promise<ToolCallResult> {
    return neverThrows('exec_command', () =>
      handleExecCommand(
        {
          manager: this.manager,
          environments: this.environments,
          execPermissionApprovals: this.#options.execPermissionApprovals,
          turnPolicy: this.#options.turnPolicy,
        },
        args,
        options,
      ),
    );
  }

  /** Handles a write_stdin call. */
  writeStdin(args: unknown): Promise<ToolCallResult> {
    return neverThrows('write_stdin', () =>
      handleWriteStdin({ manager: this.manager, turnPolicy: this.#options.turnPolicy }, args),
    );
  }

  /** Dispatches a call by tool name; an unknown name is answered with an error text. */
  call(name: string, args: unknown, options: ToolCallOptions = {}): Promise<ToolCallResult> {
    if (name === 'exec_command') return this.execCommand(args, options);
    if (name === 'write_stdin') return this.writeStdin(args);
    return Promise.resolve(errorResult(`unsupported call: ${name}`));
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
