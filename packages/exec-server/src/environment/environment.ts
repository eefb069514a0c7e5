import type { EnvironmentInfo } from '@execd/protocol';
import type { ExecBackend } from '../types.ts';

/** The environment id of the in-process (this machine) environment by default. */
export const LOCAL_ENVIRONMENT_ID = 'local';

/**
 * A place where commands run: this machine (`LocalEnvironment`) or a remote exec-server
 * (`RemoteEnvironment`). Unified exec picks one by id and starts processes on its `backend`.
 */
export interface Environment extends AsyncDisposable {
  /** Stable id, unique within an EnvironmentManager (e.g. `local`, `devbox-1`). */
  readonly id: string;
  readonly kind: 'local' | 'remote';
  /** Starts processes in this environment. */
  readonly backend: ExecBackend;
  /** `environment/info`: shell, cwd, temporary directories, capabilities. */
  info(): Promise<EnvironmentInfo>;
  /** Terminates the processes started here and releases connections. Idempotent. */
  close(): Promise<void>;
}
