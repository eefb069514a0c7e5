// Each plan's seccomp filter is built once per set of options and handed to the launcher as a
// file path: the file a plan names must hold exactly the filter of its own network mode.
import { readFileSync } from 'node:fs';
import { beforeAll, expect, test } from 'vitest';
import {
  buildSeccompFilter,
  locateBwrap,
  prepareSandboxCommand,
  probeBwrap,
  sandboxFromContext,
  seccompArchOf,
} from '../src/index.ts';
import { childEnv, requireBwrap, tempDir } from './helpers/index.ts';

type NetworkMode = 'off' | 'full' | 'proxied';

beforeAll(() => {
  requireBwrap();
});

/** The filter path a sandboxed launch line opens (the launcher's first argument). */
async function filterPathOf(network: NetworkMode, cwd: string, routed = false): Promise<string> {
  const sandbox = sandboxFromContext({ profile: 'workspace-write', network }, cwd, { env: {} });
  const command = await prepareSandboxCommand({
    command: ['/bin/true'],
    cwd,
    env: childEnv(),
    sandbox,
    tty: false,
    ...(routed
      ? { managedNetwork: { socketDir: cwd, prefixArgv: ['/usr/bin/nsenter', '--'], env: {} } }
      : {}),
  });
  try {
    const path = command.argv.find((arg) => /^\/proc\/\d+\/fd\/\d+$/.test(arg));
    if (path === undefined) throw new Error(`no filter path in ${command.argv.join(' ')}`);
    return path;
  } finally {
    await command.release();
  }
}

test('each network mode gets its own filter, built once; the file holds exactly that filter', async () => {
  using ws = tempDir();
  const caps = await probeBwrap(locateBwrap()!);
  const arch = seccompArchOf(process.arch)!;
  const expected = {
    off: { networkDisabled: true, proxyRouted: false },
    full: { networkDisabled: false, proxyRouted: false },
    proxied: { networkDisabled: true, proxyRouted: true },
  } as const;
  const paths = new Map<string, string>();
  for (const [mode, flags] of Object.entries(expected)) {
    const path = await filterPathOf(mode as NetworkMode, ws.path, mode === 'proxied');
    expect(await filterPathOf(mode as NetworkMode, ws.path, mode === 'proxied')).toBe(path);
    const filter = buildSeccompFilter({ arch, ...flags, denyUserNamespaces: !caps.disableUserns });
    expect(Buffer.from(readFileSync(path)).equals(Buffer.from(filter))).toBe(true);
    paths.set(mode, path);
  }
  expect(new Set(paths.values()).size).toBe(3);
});
