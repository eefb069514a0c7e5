import type { Logger, SandboxType } from '@execd/protocol';
import type { NetworkDenial } from '@execd/protocol/contract';
import type { RetainedOutput } from './retained-output.ts';
import { sandboxedOutput } from './sandboxed-output.ts';
import type { SandboxDenialCheck } from './spawner.ts';

/** What {@link exitSandboxDenied} reads of a process that just exited. */
export interface ExitDenialContext {
  readonly processId: string;
  readonly exitCode: number;
  readonly sandboxType: SandboxType;
  /** The process's retained output, read only for a sandboxed process. */
  readonly output: RetainedOutput;
  /** The connections its proxy refused (a `proxied` process; empty otherwise). */
  readonly networkDenials: () => readonly NetworkDenial[];
  readonly isSandboxDenied: SandboxDenialCheck;
  readonly logger: Logger;
}

/**
 * The `sandboxDenied` of a process's exit: its sandbox most likely denied it (the table's
 * {@link SandboxDenialCheck} on its retained output, for a sandboxed process), or its network
 * proxy did.
 */
export function exitSandboxDenied(context: ExitDenialContext): boolean {
  return (
    (context.sandboxType !== 'none' && checkDenied(context)) ||
    deniedByNetwork(context.exitCode, context.networkDenials)
  );
}

/**
 * A `proxied` process that failed (non-zero exit) after its proxy refused a connection counts
 * as sandbox-denied: the failure most likely is the refused connection, and unified-exec can
 * offer to approve the host and retry.
 */
function deniedByNetwork(exitCode: number, networkDenials: () => readonly NetworkDenial[]): boolean {
  return exitCode !== 0 && networkDenials().length > 0;
}

function checkDenied(context: ExitDenialContext): boolean {
  try {
    return context.isSandboxDenied(
      context.sandboxType,
      sandboxedOutput(context.output.after(0), context.exitCode),
    );
  } catch (error) {
    context.logger.warn('sandbox denial check failed', { processId: context.processId, error });
    return false;
  }
}
