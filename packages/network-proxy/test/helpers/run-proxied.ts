import { type NetworkProxy, type NetworkProxyOptions, startNetworkProxy } from '../../src/index.ts';
import { runBehindBridge } from './bridge-run.ts';
import { bwrapArgv } from './index.ts';

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
  const { child } = await runBehindBridge({ proxy, argv: bwrapArgv(['sh', '-c', script]) });
  const stdout = child.stdout();
  const codes = Object.fromEntries([...stdout.matchAll(/^(\w+)=(\d+)$/gm)].map((m) => [m[1], m[2]]));
  return { proxy, stdout, stderr: child.stderr(), codes };
}
