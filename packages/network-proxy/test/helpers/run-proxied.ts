import { inject } from 'vitest';
import {
  type NetworkProxy,
  type NetworkProxyOptions,
  spawnWithManagedNetwork,
  startNetworkProxy,
} from '../../src/index.ts';
import { BASE_ENV, bwrapArgv, spawnChild, type TestChild } from './index.ts';

/** What a proxied sandboxed command did. */
export interface ProxiedRun {
  readonly proxy: NetworkProxy;
  readonly stdout: string;
  readonly stderr: string;
  /** `name=<number>` lines of the script's output. */
  readonly codes: Readonly<Record<string, string>>;
}

/**
 * Runs `script` with `sh -c` in bwrap behind the managed network with a proxy of its own
 * (closed with the command); resolves after full teardown.
 */
export async function runProxied(script: string, options: NetworkProxyOptions): Promise<ProxiedRun> {
  const proxy = await startNetworkProxy(options);
  let child: TestChild | undefined;
  const managed = await spawnWithManagedNetwork({
    argv: bwrapArgv(['sh', '-c', script]),
    env: BASE_ENV,
    proxy,
    closeProxyOnExit: true,
    bridge: { bridgeScript: inject('bridgeScript') },
    spawn: (request) => {
      child = spawnChild(request);
      return child;
    },
  });
  await managed.closed;
  if (!child) throw new Error('spawn was not called');
  const stdout = child.stdout();
  const codes = Object.fromEntries([...stdout.matchAll(/^(\w+)=(\d+)$/gm)].map((m) => [m[1], m[2]]));
  return { proxy, stdout, stderr: child.stderr(), codes };
}
