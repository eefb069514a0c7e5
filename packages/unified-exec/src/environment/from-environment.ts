import type { Environment, ExecBackend, ExecProcess } from '@execd/exec-server';
import type { ExecParams } from '@execd/protocol';
import type { ExecEnvironment } from './exec-environment.ts';
import { LocalExecEnvironment, type LocalExecEnvironmentOptions } from './local-environment.ts';
import { RemoteExecEnvironment, type RemoteExecEnvironmentOptions } from './remote-environment.ts';

/** The environment's backend, closing the environment itself when closed. */
function owningBackend(environment: Environment): ExecBackend {
  const backend = environment.backend;
  // `start` keeps its optional per-start options (a RemoteBackend's network decider).
  const start = backend.start.bind(backend) as (
    params: ExecParams,
    options?: unknown,
  ) => Promise<ExecProcess>;
  return {
    start: (params: ExecParams, options?: unknown) => start(params, options),
    environmentInfo: () => environment.info(),
    close: () => environment.close(),
    [Symbol.asyncDispose]: () => environment.close(),
  } as ExecBackend;
}

/**
 * An exec-server `Environment` (e.g. from an `EnvironmentManager`) as a unified-exec environment,
 * with the unified-exec defaults in `options` (profile, policy, shell, cwd, …); closing the result
 * closes the environment. A remote one runs every command through its backend; a local one spawns
 * directly and uses its backend for shell snapshots and the managed network (whose questions are
 * then answered by the requester that backend was created with, not by the manager's Approver).
 */
export async function execEnvironmentFrom(
  environment: Environment,
  options: LocalExecEnvironmentOptions & RemoteExecEnvironmentOptions = {},
): Promise<ExecEnvironment> {
  const backend = owningBackend(environment);
  if (environment.kind === 'remote') {
    return new RemoteExecEnvironment(backend, await environment.info(), { id: environment.id, ...options });
  }
  return new LocalExecEnvironment({ id: environment.id, ...options, backend });
}
