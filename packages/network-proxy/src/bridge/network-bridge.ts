/**
 * A started bridge: a process holding a fresh network namespace whose loopback leads to the proxy
 * (see `startBridge`). It knows nothing of how the command is sandboxed: whoever launches the
 * command puts `prefixArgv` in front of it (or in front of its sandbox) and adds `env` to the
 * command's environment. The command must be spawned after `startBridge` resolved, and closing
 * the bridge takes the command's network away.
 */
export interface NetworkBridge extends AsyncDisposable {
  /** Pid of the bridge process (also the namespace's holder). */
  readonly pid: number;
  /** HTTP proxy port on 127.0.0.1 inside the namespace. */
  readonly httpPort: number;
  /** SOCKS5 port on 127.0.0.1 inside the namespace. */
  readonly socksPort: number;
  /** Host loopback ports mirrored into the namespace. */
  readonly loopbackPorts: readonly number[];
  /**
   * What enters the bridge's network namespace, to put in front of the command:
   * `nsenter --target <pid> [--user] --net [--preserve-credentials] --`, nsenter by absolute path
   * from a trusted system folder (never `$PATH`). `--user` when the namespace lives in a user
   * namespace of its own (what a non-root executor gets).
   */
  readonly prefixArgv: readonly string[];
  /** The proxy variables to add to the command's environment (see `proxyEnvironment`). */
  readonly env: Readonly<Record<string, string>>;
  /** Resolves when the bridge process has exited (never rejects). */
  readonly exited: Promise<void>;
  /** Stops the bridge (SIGTERM, then SIGKILL after a grace period) and waits for it. Idempotent. */
  close(): Promise<void>;
}
