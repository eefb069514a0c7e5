import { startExecServer } from '@execd/exec-server/server';
import { Environment } from '../../src/index.ts';
import { setRemoteEnvironmentFactory } from './harness.ts';

/**
 * Remote harnesses: each gets its own in-process exec-server on 127.0.0.1:0 and connects to it
 * through the client; closing the environment also stops that server.
 */
export function useRemoteHarnesses(): void {
  setRemoteEnvironmentFactory(async (options, serverOptions) => {
    const server = await startExecServer({
      listen: 'ws://127.0.0.1:0',
      ...(serverOptions.networkResolver === undefined
        ? {}
        : { processTable: { networkResolver: serverOptions.networkResolver } }),
    });
    try {
      const environment = await Environment.connect({ ...options, url: server.url });
      const closeEnvironment = environment.close.bind(environment);
      let closing: Promise<void> | undefined;
      Object.defineProperty(environment, 'close', {
        value: () => {
          closing ??= closeEnvironment().finally(() => server.close());
          return closing;
        },
      });
      return environment;
    } catch (error) {
      await server.close();
      throw error;
    }
  });
}
