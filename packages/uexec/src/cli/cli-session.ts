import { resolve } from 'node:path';
import { ForkServer } from '@execd/pty-utils';
import {
  type Approver,
  Environment,
  SecretMasker,
  UnifiedExecProcessManager,
  UnifiedExecTools,
} from '@execd/unified-exec';
import type { CliOptions } from './cli-args.ts';
import { stderrLogger } from './stderr-logger.ts';

/** One CLI run: an environment, a manager and its tools; `close()` reaps every process. */
export interface CliSession extends AsyncDisposable {
  readonly environment: Environment;
  readonly manager: UnifiedExecProcessManager;
  readonly tools: UnifiedExecTools;
  close(): Promise<void>;
}

/** Connects (or opens) the environment the options name and builds the tools around it. */
export async function openCliSession(options: CliOptions, approver: Approver): Promise<CliSession> {
  // UEXEC_LOG=debug (or trace/info/warn/error) logs the runtime's state changes to stderr.
  const logger = stderrLogger(process.env.UEXEC_LOG);
  // Undefined where no helper can run: commands are then forked by this process.
  const forkServer = options.forkServer ? await ForkServer.start({ logger }) : undefined;
  let environment: Environment;
  try {
    environment =
      options.remote === undefined
        ? Environment.local({
            cwd: options.cwd === undefined ? process.cwd() : resolve(options.cwd),
            permissionProfile: options.sandbox,
            shellSnapshot: options.shellSnapshot,
            prepareSandboxes: options.prepareSandboxes,
            forkServer,
            logger,
          })
        : await Environment.connect({
            url: options.remote,
            token: options.token,
            cwd: options.cwd,
            permissionProfile: options.sandbox,
            shellSnapshot: options.shellSnapshot,
            logger,
          });
  } catch (error) {
    await forkServer?.close();
    throw error;
  }
  const manager = new UnifiedExecProcessManager({
    approvalPolicy: options.approval,
    approver,
    logger,
    // execd additions, on for people and MCP clients: redraws rendered, secrets masked.
    presentation: { renderTerminal: true, secrets: new SecretMasker() },
  });
  const tools = new UnifiedExecTools({ manager, environments: environment });
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      try {
        await manager.close();
      } finally {
        await environment.close();
        await forkServer?.close();
      }
    })();
    return closing;
  };
  return { environment, manager, tools, close, [Symbol.asyncDispose]: close };
}
