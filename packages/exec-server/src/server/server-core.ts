import type { Logger } from '@execd/protocol';
import { LocalProcessTable } from '../local/index.ts';
import { ConnectionProcessor, type ConnectionTransport } from './connection-processor.ts';
import { containmentInfo, localEnvironmentInfo, resourceLimitsInfo } from './environment-info.ts';
import { ExecServerMetrics } from './metrics.ts';
import type { DispatchMode } from './request-lanes.ts';
import { DETACHED_SESSION_TTL_MS, RESUME_LIVENESS_TIMEOUT_MS, SessionRegistry } from './session-registry.ts';
import type { ExecServerOptions } from './start-exec-server.ts';

/** A transport a connection processor can be attached to (WebSocket, stdio, a dialled socket). */
export type AttachableTransport = ConnectionTransport & { attach(processor: ConnectionProcessor): void };

/** What every way of serving (listening, stdio, dialling out) shares: sessions, metrics, connections. */
export interface ServerCore {
  readonly metrics: ExecServerMetrics;
  readonly registry: SessionRegistry;
  /** Serves one connection: a processor attached to `transport`. */
  open(transport: AttachableTransport): ConnectionProcessor;
}

/**
 * The session registry (each session's process table), the metrics and the connection factory of
 * one server. Probes, once, what `environment/info` reports about limits and containment when the
 * server runs its own local process tables.
 */
export async function createServerCore(
  options: ExecServerOptions,
  settings: {
    readonly logger: Logger;
    readonly dispatchMode: DispatchMode;
    readonly detachedTtlMs?: number | undefined;
    readonly resumeLivenessTimeoutMs?: number | undefined;
  },
): Promise<ServerCore> {
  const { logger, dispatchMode } = settings;
  const metrics = new ExecServerMetrics();
  const registry = new SessionRegistry({
    createProcessTable:
      options.createProcessTable ??
      ((context) =>
        new LocalProcessTable({
          logger,
          ...options.processTable,
          networkPolicyRequester: context.requestNetworkPolicy,
        })),
    detachedTtlMs: settings.detachedTtlMs ?? DETACHED_SESSION_TTL_MS,
    resumeLivenessTimeoutMs: settings.resumeLivenessTimeoutMs ?? RESUME_LIVENESS_TIMEOUT_MS,
    logger,
    metrics,
  });
  metrics.bindSessions(() => registry.snapshot());
  const preparedSandboxes = options.processTable?.preparedSandboxes;
  if (preparedSandboxes !== undefined) metrics.bindPreparedSandboxes(() => preparedSandboxes.stats());
  const forkServer = options.processTable?.forkServer;
  if (forkServer !== undefined) metrics.bindForkServer(() => forkServer.stats());
  // Found once, at start: which cgroups enforce the commands' limits (or why none do), and how a
  // command's tree is contained.
  const local = options.environmentInfo === undefined && options.createProcessTable === undefined;
  const resourceLimits = local
    ? await resourceLimitsInfo(options.processTable?.commandLimits, logger)
    : undefined;
  const containment = local ? await containmentInfo(logger) : undefined;
  const environmentInfo =
    options.environmentInfo ?? (() => localEnvironmentInfo({ resourceLimits, containment }));
  const open = (transport: AttachableTransport): ConnectionProcessor => {
    const processor = new ConnectionProcessor({
      transport,
      registry,
      dispatchMode,
      environmentInfo,
      executorEnv: options.executorEnv,
      systemConfigDir: options.systemConfigDir,
      logger,
      metrics,
    });
    transport.attach(processor);
    return processor;
  };
  return { metrics, registry, open };
}
