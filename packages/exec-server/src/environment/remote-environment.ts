import type { EnvironmentInfo, EnvironmentStatus } from '@execd/protocol';
import type { ExecServerClientOptions } from '../client/client-options.ts';
import type { ExecServerClient } from '../client/exec-server-client.ts';
import { RemoteBackend } from '../client/remote-backend.ts';
import type { Environment } from './environment.ts';

/**
 * A remote exec-server as an Environment, through one resuming ExecServerClient. `info()` is
 * asked once and remembered (an executor does not change while its session lives).
 */
export class RemoteEnvironment implements Environment {
  readonly id: string;
  readonly kind = 'remote' as const;
  readonly backend: RemoteBackend;
  #info: Promise<EnvironmentInfo> | undefined;
  #closing: Promise<void> | undefined;

  /** Wraps a connected backend; the environment owns it. */
  constructor(id: string, backend: RemoteBackend) {
    this.id = id;
    this.backend = backend;
  }

  /** Connects to the exec-server at `options.url`. */
  static async connect(id: string, options: ExecServerClientOptions): Promise<RemoteEnvironment> {
    return new RemoteEnvironment(id, await RemoteBackend.connect(options));
  }

  /** The client (session id, state, failure). */
  get client(): ExecServerClient {
    return this.backend.client;
  }

  /** `environment/info` of the executor (asked once; a failed attempt is retried next time). */
  info(): Promise<EnvironmentInfo> {
    if (this.#info === undefined) {
      const asked = this.client.environmentInfo();
      this.#info = asked;
      asked.catch(() => {
        if (this.#info === asked) this.#info = undefined;
      });
    }
    return this.#info;
  }

  /** `environment/status`: `{status: "ready"}` from a live executor. */
  status(): Promise<EnvironmentStatus> {
    return this.client.environmentStatus();
  }

  /** Terminates the processes started here and closes the connection. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= this.backend.close();
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
