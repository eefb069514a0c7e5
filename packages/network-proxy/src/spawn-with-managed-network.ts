import { type NetworkBridge, type StartBridgeOptions, startBridge } from './bridge/start-bridge.ts';
import type { NetworkProxy } from './network-proxy.ts';

/** What `spawnWithManagedNetwork` hands to the caller's spawn function. */
export interface ManagedNetworkSpawnRequest {
  /** `nsenter ... -- <your argv>` (bwrap's `--unshare-net` removed). Spawn it as is. */
  readonly argv: readonly string[];
  /** Your environment plus the proxy variables (which override any inherited ones). */
  readonly env: Readonly<Record<string, string>>;
}

/** The least a spawned child must offer: a promise that settles when it has exited. */
export interface ManagedNetworkChild {
  readonly exited: Promise<unknown>;
}

/** Options for `spawnWithManagedNetwork`. */
export interface SpawnWithManagedNetworkOptions<TChild extends ManagedNetworkChild> {
  /** The command, usually the bwrap argv the sandboxing package built for `proxied` mode. */
  readonly argv: readonly string[];
  /** The command's environment (without proxy variables; they are added). */
  readonly env: Readonly<Record<string, string>>;
  /** The proxy for this process (create one per process: decider answers are cached per proxy). */
  readonly proxy: NetworkProxy;
  /** Spawns the wrapped command: PTY or pipes, e.g. `(r) => spawnPty({ ...r, cwd })`. */
  readonly spawn: (request: ManagedNetworkSpawnRequest) => Promise<TChild> | TChild;
  /** Close the proxy too when the child exits or the spawn fails (default false). */
  readonly closeProxyOnExit?: boolean | undefined;
  /** Bridge settings (ports, user namespace, script, timeout, logger). */
  readonly bridge?: Omit<StartBridgeOptions, 'proxy'> | undefined;
}

/** A child running behind the managed network. */
export interface ManagedNetworkProcess<TChild> extends AsyncDisposable {
  readonly child: TChild;
  readonly bridge: NetworkBridge;
  /** Resolves once the child exited and the bridge (and the proxy, if owned) are closed. Never rejects. */
  readonly closed: Promise<void>;
  /** Tears down the bridge (and the owned proxy) now; the child then has no network. Idempotent. */
  close(): Promise<void>;
}

/**
 * Runs a command with `proxied` network: starts the bridge (the command's network namespace,
 * listening before the command exists), spawns `bridge.wrapArgv(argv)` with the proxy variables
 * through the caller's `spawn`, and tears the bridge (and, if asked, the proxy) down when the
 * child exits. If the bridge cannot start, nothing is spawned (`ExecError('spawnFailed')`).
 */
export async function spawnWithManagedNetwork<TChild extends ManagedNetworkChild>(
  options: SpawnWithManagedNetworkOptions<TChild>,
): Promise<ManagedNetworkProcess<TChild>> {
  const { proxy } = options;
  const owned = options.closeProxyOnExit ?? false;
  let bridge: NetworkBridge;
  try {
    bridge = await startBridge({ ...options.bridge, proxy });
  } catch (error) {
    if (owned) await proxy.close();
    throw error;
  }
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      await bridge.close();
      if (owned) await proxy.close();
    })();
    return closing;
  };
  let child: TChild;
  try {
    child = await options.spawn({
      argv: bridge.wrapArgv(options.argv),
      env: { ...options.env, ...bridge.env },
    });
  } catch (error) {
    await close();
    throw error;
  }
  const closed = child.exited.then(close, close);
  return { child, bridge, closed, close, [Symbol.asyncDispose]: close };
}
