import {
  type NetworkBridge,
  type NetworkProxy,
  type StartBridgeOptions,
  startBridge,
} from '@execd/network-proxy';
import type { Logger } from '@execd/protocol';
import type { SpawnedProcess } from '@execd/pty-utils';
import type { NetworkRoute } from './linux/command-line.ts';

/** The managed network of a `proxied` command: its proxy, and how to start the bridge to it. */
export interface SpawnManagedNetwork {
  /**
   * The proxy this command's traffic must go through (one per process: decider answers are cached
   * per proxy). The caller owns it and closes it once the process is done.
   */
  readonly proxy: NetworkProxy;
  /** Bridge settings (ports inside the sandbox, user namespace, script, start timeout, logger). */
  readonly bridge?: Omit<StartBridgeOptions, 'proxy'> | undefined;
}

/** The bridge of a `proxied` command; it is torn down when the command has exited and its output ended. */
export interface SpawnedNetwork extends AsyncDisposable {
  readonly bridge: NetworkBridge;
  /** Resolves once the bridge is gone (after the command closed, or `close()`). Never rejects. */
  readonly closed: Promise<void>;
  /** Stops the bridge now (the command then has no network). Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts the bridge to `managed.proxy` (it listens before the command exists), then spawns the
 * command through `spawn` with the bridge's route, and ties the bridge's lifetime to the command.
 * If the bridge cannot start, nothing is spawned (`ExecError('spawnFailed')`); if the spawn
 * fails, the bridge is closed. The proxy stays the caller's.
 */
export async function spawnBehindBridge(
  managed: SpawnManagedNetwork,
  logger: Logger | undefined,
  spawn: (route: NetworkRoute) => Promise<SpawnedProcess>,
): Promise<{ process: SpawnedProcess; network: SpawnedNetwork }> {
  const bridge = await startBridge({ logger, ...managed.bridge, proxy: managed.proxy });
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= bridge.close();
    return closing;
  };
  let child: SpawnedProcess;
  try {
    child = await spawn(bridge);
  } catch (error) {
    await close();
    throw error;
  }
  // The bridge stays up until the command's output has ended, not just until it exited: a
  // descendant still holding its pipes may still be using the network.
  const closed = child.closed.then(close, close);
  return { process: child, network: { bridge, closed, close, [Symbol.asyncDispose]: close } };
}
