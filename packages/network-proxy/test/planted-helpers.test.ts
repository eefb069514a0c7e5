// Its own file (its own worker process): the helpers are resolved once per process, so this must
// be the first managed-network launch of the process for the planted PATH to matter.
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { createStaticResolver, startNetworkProxy } from '../src/index.ts';
import { runBehindBridge } from './helpers/bridge-run.ts';
import { bwrapArgv, startOrigin } from './helpers/index.ts';

const PLANTED = ['unshare', 'nsenter', 'ip', 'ifconfig', 'sh', 'node'];

const savedPath = process.env.PATH;
afterEach(async () => {
  process.env.PATH = savedPath;
});

test('helpers planted in a writable folder first on the executor PATH are never run', async () => {
  // What a sandboxed command could do to a folder on the server's PATH (here a temp folder).
  const planted = await mkdtemp(join(tmpdir(), 'execd-planted-'));
  const markers = await mkdtemp(join(tmpdir(), 'execd-markers-'));
  try {
    for (const name of PLANTED) {
      // Each fake leaves a marker, then does the real thing so that nothing else would give it away.
      const script = `#!/bin/sh\n: > '${join(markers, name)}'\nPATH=/usr/sbin:/usr/bin:/sbin:/bin exec ${name} "$@"\n`;
      await writeFile(join(planted, name), script);
      await chmod(join(planted, name), 0o755);
    }
    process.env.PATH = `${planted}:${savedPath ?? ''}`;
    await using origin = await startOrigin();
    const proxy = await startNetworkProxy({
      allowedDomains: ['allowed.test'],
      resolver: createStaticResolver({ 'allowed.test': '127.0.0.1' }),
      loopbackPorts: [origin.port],
    });
    const { bridge, child } = await runBehindBridge({
      proxy,
      argv: bwrapArgv(['sh', '-c', `curl -sS --max-time 20 http://allowed.test:${origin.port}/planted`]),
    });
    expect(child.stdout(), child.stderr()).toBe(`hello allowed.test:${origin.port}/planted`);
    // The bridge prefix names nsenter by absolute path from a system folder.
    expect(bridge.prefixArgv[0]).toMatch(/^\/(usr\/)?s?bin\/nsenter$/);
    expect(await readdir(markers)).toEqual([]);
    for (const name of PLANTED) expect(existsSync(join(markers, name))).toBe(false);
  } finally {
    process.env.PATH = savedPath;
    await rm(planted, { recursive: true, force: true });
    await rm(markers, { recursive: true, force: true });
  }
});
