import { decodeParams, type Emitter, type Logger } from '@execd/protocol';
import type { NetworkPolicyRouter } from './network-policy-router.ts';
import { notificationEvent } from './notification-event.ts';
import type { ProcessRouter } from './process-router.ts';

/** Where the notifications of the current connection go. */
export interface NotificationTargets {
  readonly router: ProcessRouter;
  readonly network: NetworkPolicyRouter;
  /** `fs/missingChanged` watch ids (for RemoteFileSystem). */
  readonly missingChanged: Emitter<number>;
  readonly logger: Logger;
}

/**
 * Routes one server notification: network decisions, `fs/missingChanged`, the execd extension
 * `process/waitingForInput` (unsequenced, best effort), and the sequenced process events. A
 * notification that does not decode is logged and dropped: a hole in a process's events is filled
 * by its next read.
 */
export function dispatchNotification(targets: NotificationTargets, method: string, params: unknown): void {
  try {
    switch (method) {
      case 'network/policyDecision':
        targets.network.accept(params);
        return;
      case 'process/waitingForInput': {
        const { processId, seq } = decodeParams(method, params);
        targets.router.lookup(processId)?.waitingForInput.fire(seq);
        return;
      }
      case 'fs/missingChanged':
        targets.missingChanged.fire(decodeParams(method, params).watchId);
        return;
    }
    const routed = notificationEvent(method, params);
    if (routed === undefined) {
      targets.logger.debug('ignored notification', { method });
      return;
    }
    if (Array.isArray(routed)) for (const one of routed) targets.router.accept(one);
    else targets.router.accept(routed);
  } catch (error) {
    targets.logger.warn('invalid notification from the exec-server', { method, error });
  }
}
