import type { EnvironmentInfo } from '@execd/protocol';
import { LocalBackend, type LocalBackendOptions } from '../local/local-backend.ts';
import { type Environment, LOCAL_ENVIRONMENT_ID } from './environment.ts';

/** Options of a LocalEnvironment. */
export interface LocalEnvironmentOptions {
  /** Default `local`. */
  readonly id?: string | undefined;
  /** Use this backend (the environment then owns it) instead of creating one. */
  readonly backend?: LocalBackend | undefined;
  /** Options of the LocalBackend created when `backend` is not given. */
  readonly backendOptions?: LocalBackendOptions | undefined;
}

/** This machine as an Environment: processes run in this Node process's own process table. */
export class LocalEnvironment implements Environment {
  readonly id: string;
  readonly kind = 'local' as const;
  readonly backend: LocalBackend;
  #closing: Promise<void> | undefined;

  constructor(options: LocalEnvironmentOptions = {}) {
    this.id = options.id ?? LOCAL_ENVIRONMENT_ID;
    this.backend = options.backend ?? new LocalBackend(options.backendOptions);
  }

  /** This host, as `environment/info` describes it. */
  info(): Promise<EnvironmentInfo> {
    return this.backend.environmentInfo();
  }

  /** Kills every process started here. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= this.backend.close();
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
