import type { ExecProcess } from '@execd/exec-server';
import type { NetworkPolicyDecider } from '@execd/exec-server/client';
import {
  ExecError,
  type NetworkDecision,
  type NetworkPolicyRequestParams,
  type NetworkPolicyResponse,
} from '@execd/protocol';

/** Reason sent with a denial nobody gave a reason for. */
const DENIED_REASON = 'denied by the unified-exec host';

function toDecision(answer: unknown): NetworkDecision {
  const decision =
    typeof answer === 'string' ? { type: answer } : (answer as { type?: unknown; reason?: unknown });
  const reason = typeof decision?.reason === 'string' && decision.reason !== '' ? decision.reason : undefined;
  if (decision?.type === 'allow') return { type: 'allow' };
  if (decision?.type === 'ask') return { type: 'ask', reason: reason ?? DENIED_REASON };
  return { type: 'deny', reason: reason ?? DENIED_REASON };
}

/**
 * The per-process deciders of an in-process exec-server backend: its process table asks one
 * requester for every process, which this registry routes by process id (a remote backend takes
 * the decider per start instead).
 */
export class NetworkDeciders {
  readonly #deciders = new Map<string, NetworkPolicyDecider>();

  /** The table's `networkPolicyRequester`: an unregistered process is denied. */
  readonly requester = async (
    params: NetworkPolicyRequestParams,
    options: { readonly cancelSignal: AbortSignal },
  ): Promise<NetworkPolicyResponse> => {
    const decider = this.#deciders.get(params.processId);
    if (decider === undefined) {
      throw new ExecError('unsupported', `no network policy decider for process ${params.processId}`);
    }
    return { decision: toDecision(await decider(params, options)) };
  };

  /** Routes `processId`'s questions to `decider` until the returned handle is disposed. */
  register(processId: string, decider: NetworkPolicyDecider): Disposable {
    this.#deciders.set(processId, decider);
    return {
      [Symbol.dispose]: () => {
        if (this.#deciders.get(processId) === decider) this.#deciders.delete(processId);
      },
    };
  }

  /** Number of registered deciders (leak checks). */
  get size(): number {
    return this.#deciders.size;
  }
}

/** `process` whose `close()` also runs `onClose` (once). */
export function withCloseHook(process: ExecProcess, onClose: () => void): ExecProcess {
  let hooked = false;
  const close = async (): Promise<void> => {
    if (!hooked) {
      hooked = true;
      onClose();
    }
    await process.close();
  };
  return {
    get processId() {
      return process.processId;
    },
    get sandboxType() {
      return process.sandboxType;
    },
    read: (options) => process.read(options),
    write: (chunk, options) => process.write(chunk, options),
    interrupt: () => process.interrupt(),
    terminate: () => process.terminate(),
    resize: (cols, rows) => process.resize(cols, rows),
    events: (options) => process.events(options),
    close,
    [Symbol.asyncDispose]: close,
  };
}
