import type { EnvironmentInfo } from '../schemas/environment.ts';
import type { ExecParams } from '../schemas/process.ts';
import type { ExecProcess } from './exec-process.ts';
import type { NetworkPolicyDecider } from './network-policy.ts';

/** Options of one `ExecBackend.start`. */
export interface StartOptions {
  /**
   * Answers the `network/policyRequest`s of this one `proxied` process (hosts no pattern of its
   * policy matches). Absent: the backend's default behaviour (a remote backend asks its client's
   * `onNetworkPolicyRequest`, a local one its table's `networkPolicyRequester`).
   */
  readonly networkPolicyDecider?: NetworkPolicyDecider | undefined;
}

/** Starts processes somewhere: in this process, or on a remote exec-server. */
export interface ExecBackend extends AsyncDisposable {
  start(params: ExecParams, options?: StartOptions): Promise<ExecProcess>;
  environmentInfo(): Promise<EnvironmentInfo>;
  /** Terminates every process it started and releases the connection. Idempotent. */
  close(): Promise<void>;
}
