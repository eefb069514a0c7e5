import type { EnvironmentInfo, ExecParamsInput, Logger } from '@execd/protocol';
import type { ExecBackend, StartOptions } from '@execd/protocol/contract';
import type { ExecServerClientOptions } from './client-options.ts';
import { ExecServerClient } from './exec-server-client.ts';
import type { RemoteProcess } from './remote-process.ts';

/** Options of a RemoteBackend built around an existing client. */
export interface RemoteBackendOptions {
  /** Close the client when the backend closes (default true). */
  readonly ownsClient?: boolean | undefined;
  readonly logger?: Logger | undefined;
}

/**
 * The remote `ExecBackend`: starts processes on an exec-server through an ExecServerClient
 * (`start` is `process/start`) and hands out `RemoteProcess` handles. `close()` terminates every
 * process it started that is still running, then closes the client.
 */
export class RemoteBackend implements ExecBackend {
  /** The client behind this backend. */
  readonly client: ExecServerClient;
  readonly #ownsClient: boolean;
  readonly #logger: Logger | undefined;
  readonly #started = new Set<RemoteProcess>();
  #closing: Promise<void> | undefined;

  constructor(client: ExecServerClient, options: RemoteBackendOptions = {}) {
    this.client = client;
    this.#ownsClient = options.ownsClient ?? true;
    this.#logger = options.logger;
  }

  /** Connects a client (see `ExecServerClient.connect`) and wraps it; the backend owns it. */
  static async connect(options: ExecServerClientOptions): Promise<RemoteBackend> {
    return new RemoteBackend(await ExecServerClient.connect(options), { logger: options.logger });
  }

  /**
   * Starts a process on the server (same validation and errors as `process/start`).
   * `options.networkPolicyDecider` answers this process's `network/policyRequest`s instead of the
   * client's `onNetworkPolicyRequest`.
   */
  async start(params: ExecParamsInput, options: StartOptions = {}): Promise<RemoteProcess> {
    const process = await this.client.start(params, options);
    // Finished processes need no terminate on close; their followers end on their own.
    for (const started of this.#started) if (!started.live) this.#started.delete(started);
    this.#started.add(process);
    return process;
  }

  /** `environment/info` of the server. */
  environmentInfo(): Promise<EnvironmentInfo> {
    return this.client.environmentInfo();
  }

  /** Terminates what it started and is still live, ends their followers, closes the client. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #close(): Promise<void> {
    // While the client is away (recovering or failed) a terminate could only wait; the server
    // reaps a session that is not resumed within its TTL.
    const reachable = this.client.state === 'ready';
    const live = [...this.#started].filter((process) => reachable && process.live);
    const results = await Promise.allSettled(live.map((process) => process.terminate()));
    for (const [index, result] of results.entries()) {
      if (result.status === 'rejected') {
        this.#logger?.debug('terminate on close failed', {
          processId: live[index]?.processId,
          error: result.reason,
        });
      }
    }
    const handles = [...this.#started];
    this.#started.clear();
    await Promise.allSettled(handles.map((process) => process.close()));
    if (this.#ownsClient) await this.client.close();
  }
}
