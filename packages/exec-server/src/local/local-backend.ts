import type { EnvironmentInfo, ExecParams } from '@execd/protocol';
import type { ExecBackend, StartOptions } from '@execd/protocol/contract';
import { containmentInfo, localEnvironmentInfo, resourceLimitsInfo } from '../server/environment-info.ts';
import { deciderRequester } from './decider-requester.ts';
import { LocalExecProcess } from './local-exec-process.ts';
import { LocalProcessTable, type LocalProcessTableOptions } from './local-process-table.ts';

/** Options of a LocalBackend: those of its process table. */
export type LocalBackendOptions = LocalProcessTableOptions;

/**
 * The in-process `ExecBackend`: starts processes in this Node process through its own
 * LocalProcessTable, and hands out `LocalExecProcess` handles. `close()` kills everything it
 * started.
 */
export class LocalBackend implements ExecBackend {
  /** The table behind this backend (e.g. to list its processes). */
  readonly table: LocalProcessTable;
  // Aborted by close(): ends the followers of every handle this backend gave out.
  readonly #closed = new AbortController();
  readonly #commandLimits: LocalBackendOptions['commandLimits'];
  #closing: Promise<void> | undefined;

  constructor(options: LocalBackendOptions = {}) {
    this.table = new LocalProcessTable(options);
    this.#commandLimits = options.commandLimits;
  }

  /**
   * Starts a process (same validation and errors as `process/start`).
   * `options.networkPolicyDecider` answers this process's `network/policyRequest`s instead of the
   * table's `networkPolicyRequester`.
   */
  async start(params: ExecParams, options: StartOptions = {}): Promise<LocalExecProcess> {
    const decider = options.networkPolicyDecider;
    const { response, record } = await this.table.startProcess(params, {
      networkPolicyRequester: decider === undefined ? undefined : deciderRequester(decider),
    });
    return new LocalExecProcess(this.table, record, {
      sandboxType: response.sandboxType,
      ownerSignal: this.#closed.signal,
    });
  }

  /** This host, as `environment/info` describes it. */
  async environmentInfo(): Promise<EnvironmentInfo> {
    return localEnvironmentInfo({
      resourceLimits: await resourceLimitsInfo(this.#commandLimits),
      containment: await containmentInfo(),
    });
  }

  /** Ends every handle's followers and kills every process tree. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #close(): Promise<void> {
    try {
      await this.table.shutdown();
    } finally {
      this.#closed.abort();
    }
  }
}
