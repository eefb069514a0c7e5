import { inject } from 'vitest';
import {
  type NetworkBridge,
  type NetworkProxy,
  type StartBridgeOptions,
  startBridge,
} from '../../src/index.ts';
import { BASE_ENV, spawnChild, type TestChild } from './index.ts';

/** How to run one command behind a bridge of `proxy`. */
export interface RunBehindBridgeOptions {
  /** The proxy; it belongs to the run and is closed with it (also when the bridge fails). */
  readonly proxy: NetworkProxy;
  /** The command (usually `bwrapArgv(...)`); `bridge.prefixArgv` is put in front of it. */
  readonly argv: readonly string[];
  /** The command's environment without the proxy variables (default `BASE_ENV`). */
  readonly env?: Readonly<Record<string, string>>;
  /** Bridge settings (default: the test bundle's bridge script). */
  readonly bridge?: Omit<StartBridgeOptions, 'proxy'>;
  /** Runs after the bridge listens, just before the command is spawned. */
  readonly beforeSpawn?: (bridge: NetworkBridge) => Promise<void>;
}

/** A finished run: the command exited, then the bridge and the proxy were closed. */
export interface BridgeRun {
  readonly bridge: NetworkBridge;
  readonly child: TestChild;
  readonly exit: Awaited<TestChild['exited']>;
}

/**
 * What a launcher does with the bridge interface: starts the bridge, spawns
 * `[...bridge.prefixArgv, ...argv]` with the proxy variables added to the environment once it
 * listens, and closes the bridge, then the proxy, after the command exited.
 */
export async function runBehindBridge(options: RunBehindBridgeOptions): Promise<BridgeRun> {
  const { proxy } = options;
  let bridge: NetworkBridge;
  try {
    bridge = await startBridge({ bridgeScript: inject('bridgeScript'), ...options.bridge, proxy });
  } catch (error) {
    await proxy.close();
    throw error;
  }
  try {
    await options.beforeSpawn?.(bridge);
    const child = spawnChild({
      argv: [...bridge.prefixArgv, ...options.argv],
      env: { ...(options.env ?? BASE_ENV), ...bridge.env },
    });
    const exit = await child.exited;
    return { bridge, child, exit };
  } finally {
    await bridge.close();
    await proxy.close();
  }
}
