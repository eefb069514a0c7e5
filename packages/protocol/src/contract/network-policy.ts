import { ExecError } from '../errors.ts';
import type { NetworkDecision, NetworkPolicyRequestParams } from '../schemas/network.ts';

/** What a decider may answer: a bare verdict, or the wire's `NetworkDecision` (`{type, reason?}`). */
export type NetworkPolicyAnswer = 'allow' | 'deny' | 'ask' | NetworkDecision;

/**
 * Answers a `network/policyRequest`: may process `processId` reach `request.host:request.port`?
 * Called only for hosts no pattern of the process's policy matches. `cancelSignal` aborts when
 * the answer is no longer wanted (the process closed, or the connection the question came on went
 * away: the server then denies that connection). A throw denies the connection without the answer
 * being remembered (remotely it is answered -32603).
 */
export type NetworkPolicyDecider = (
  request: NetworkPolicyRequestParams,
  context: { readonly cancelSignal: AbortSignal },
) => NetworkPolicyAnswer | Promise<NetworkPolicyAnswer>;

/**
 * A decider's answer as the wire's `NetworkDecision` (a bare verdict becomes `{type}`; an empty
 * reason is dropped). Throws a `protocol` ExecError for anything else.
 */
export function toNetworkDecision(answer: unknown): NetworkDecision {
  const decision: unknown = typeof answer === 'string' ? { type: answer } : answer;
  if (typeof decision === 'object' && decision !== null) {
    const { type, reason } = decision as { type?: unknown; reason?: unknown };
    const given = typeof reason === 'string' && reason !== '' ? reason : undefined;
    if (type === 'allow') return { type: 'allow' };
    if (type === 'deny' || type === 'ask') return given === undefined ? { type } : { type, reason: given };
  }
  throw new ExecError('protocol', `network policy decider answered ${JSON.stringify(answer) ?? 'nothing'}`);
}
