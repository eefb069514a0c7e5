import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NetworkResolver } from '@execd/network-proxy';
import { type ParsedToolText, parseToolText } from '@execd/test-kit';
import {
  Environment,
  type LocalEnvironmentOptions,
  type ToolCallResult,
  type TruncationPolicy,
  UnifiedExecProcessManager,
  type UnifiedExecProcessManagerOptions,
  UnifiedExecTools,
} from '../../src/index.ts';

/** Where a harness runs its commands. */
export type HarnessMode = 'local' | 'remote';

/** Options of {@link createHarness}. */
export interface HarnessOptions {
  readonly manager?: UnifiedExecProcessManagerOptions;
  readonly environment?: LocalEnvironmentOptions;
  /** The turn's truncation policy of the tools. */
  readonly turnPolicy?: TruncationPolicy;
  /** Name resolution of managed-network proxies (maps test host names; the real network is never used). */
  readonly networkResolver?: NetworkResolver;
}

/** A manager, its tools and one environment rooted in a fresh temp directory. */
export interface Harness extends AsyncDisposable {
  readonly mode: HarnessMode;
  readonly manager: UnifiedExecProcessManager;
  readonly tools: UnifiedExecTools;
  readonly environment: Environment;
  /** The environment's cwd (a fresh temp directory, removed at close). */
  readonly dir: string;
  exec(args: Record<string, unknown> | string): Promise<ToolCallResult>;
  write(args: Record<string, unknown> | string): Promise<ToolCallResult>;
  /** exec + parse (throws on an error result). */
  execParsed(args: Record<string, unknown>): Promise<ParsedToolText>;
  /** write + parse (throws on an error result). */
  writeParsed(args: Record<string, unknown>): Promise<ParsedToolText>;
  close(): Promise<void>;
}

function parsedOrThrow(result: ToolCallResult): ParsedToolText {
  if (!result.success) throw new Error(`tool call failed: ${result.text}`);
  return parseToolText(result.text);
}

/** The remote environment factory (set by the remote suite helper once the client exists). */
export type RemoteEnvironmentFactory = (
  options: LocalEnvironmentOptions & { cwd: string },
  server: { readonly networkResolver?: NetworkResolver | undefined },
) => Promise<Environment>;

let remoteFactory: RemoteEnvironmentFactory | undefined;

/** Registers how remote harnesses get their environment. */
export function setRemoteEnvironmentFactory(factory: RemoteEnvironmentFactory): void {
  remoteFactory = factory;
}

/**
 * A harness: deterministic process ids, bash without login files, full access unless the test
 * asks for a sandbox; `mode: 'remote'` runs the same commands through an in-process
 * exec-server on 127.0.0.1:0 and the client.
 */
export async function createHarness(mode: HarnessMode, options: HarnessOptions = {}): Promise<Harness> {
  const dir = await mkdtemp(join(tmpdir(), 'uexec-test-'));
  const environmentOptions = {
    shell: '/bin/bash',
    permissionProfile: 'danger-full-access' as const,
    allowLoginShell: false,
    ...options.environment,
    cwd: options.environment?.cwd ?? dir,
  };
  let environment: Environment;
  if (mode === 'local') {
    environment = Environment.local({
      ...environmentOptions,
      ...(options.networkResolver === undefined
        ? {}
        : { backendOptions: { networkResolver: options.networkResolver } }),
    });
  } else {
    if (remoteFactory === undefined) throw new Error('no remote environment factory registered');
    environment = await remoteFactory(environmentOptions, { networkResolver: options.networkResolver });
  }
  const manager = new UnifiedExecProcessManager({ processIds: 'deterministic', ...options.manager });
  const tools = new UnifiedExecTools({ manager, environments: environment, turnPolicy: options.turnPolicy });
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      await manager.close();
      await environment.close();
      await rm(dir, { recursive: true, force: true });
    })();
    return closing;
  };
  return {
    mode,
    manager,
    tools,
    environment,
    dir,
    exec: (args) => tools.execCommand(args),
    write: (args) => tools.writeStdin(args),
    execParsed: async (args) => parsedOrThrow(await tools.execCommand(args)),
    writeParsed: async (args) => parsedOrThrow(await tools.writeStdin(args)),
    close,
    [Symbol.asyncDispose]: close,
  };
}
