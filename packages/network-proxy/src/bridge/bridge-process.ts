import type { ChildProcess } from 'node:child_process';
import type { Logger } from '@execd/protocol';
import type { LaunchedBridge } from './launch-bridge.ts';
import type { NetworkBridge } from './network-bridge.ts';
import { proxyEnvironment } from './proxy-env.ts';

/** After SIGTERM, how long `close()` waits before SIGKILL. The bridge exits at once on SIGTERM. */
const BRIDGE_KILL_GRACE_MS = 2_000;

/** What `startBridge` hands over once the bridge listens. */
export interface BridgeProcessParts {
  readonly launched: LaunchedBridge;
  readonly httpPort: number;
  readonly socksPort: number;
  readonly loopbackPorts: readonly number[];
  /** Absolute path of the trusted `nsenter`. */
  readonly nsenter: string;
  /** The namespace lives in a user namespace of its own (enter that too). */
  readonly userNamespace: boolean;
  readonly logger: Logger;
}

/** The running bridge process behind a `NetworkBridge`. */
export class BridgeProcess implements NetworkBridge {
  readonly pid: number;
  readonly httpPort: number;
  readonly socksPort: number;
  readonly loopbackPorts: readonly number[];
  readonly prefixArgv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly exited: Promise<void>;
  readonly #child: ChildProcess;
  #closing: Promise<void> | undefined;

  constructor(parts: BridgeProcessParts) {
    const { child, exited, stderr } = parts.launched;
    this.#child = child;
    this.pid = child.pid ?? -1;
    this.exited = exited;
    void exited.then(() => {
      // Without the bridge the command has no network left; say so (it fails closed).
      if (this.#closing === undefined)
        parts.logger.warn('network bridge exited unexpectedly', { pid: this.pid, stderr: stderr() });
    });
    this.httpPort = parts.httpPort;
    this.socksPort = parts.socksPort;
    this.loopbackPorts = parts.loopbackPorts;
    const namespaces = parts.userNamespace ? ['--user', '--net', '--preserve-credentials'] : ['--net'];
    this.prefixArgv = Object.freeze([parts.nsenter, '--target', String(this.pid), ...namespaces, '--']);
    this.env = Object.freeze(proxyEnvironment({ httpPort: parts.httpPort, socksPort: parts.socksPort }));
  }

  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #shutdown(): Promise<void> {
    if (this.#child.exitCode === null && this.#child.signalCode === null) {
      this.#child.kill('SIGTERM');
      const timer = setTimeout(() => this.#child.kill('SIGKILL'), BRIDGE_KILL_GRACE_MS);
      await this.exited;
      clearTimeout(timer);
    }
    await this.exited;
  }
}
