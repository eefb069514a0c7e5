// The `proxied` network mode with real bubblewrap, a real managed-network proxy and bridge, and
// real local servers: what the command can reach, what it cannot, and that nothing outlives it.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createStaticResolver, type NetworkProxy, startNetworkProxy } from '@execd/network-proxy';
import { ExecError, type SandboxContext } from '@execd/protocol';
import { isProcessAlive } from '@execd/pty-utils';
import { listenUnixDaemon, type Origin, startOrigin, waitFor } from '@execd/test-kit';
import { afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { prepareSandboxCommand, type SpawnResult, sandboxFromContext, spawnProcess } from '../src/index.ts';
import { childEnv, requireBwrap, tempDir } from './helpers/index.ts';

let origin: Origin;
let proxy: NetworkProxy;

beforeAll(() => {
  requireBwrap();
});

beforeEach(async () => {
  origin = await startOrigin();
  proxy = await startNetworkProxy({
    allowedDomains: ['allowed.test'],
    deniedDomains: ['denied.test'],
    loopbackPorts: [origin.port],
    resolver: createStaticResolver({ 'allowed.test': '127.0.0.1', 'denied.test': '127.0.0.1' }),
  });
});

afterEach(async () => {
  await proxy.close();
  await origin.close();
});

interface Run {
  readonly result: SpawnResult;
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `bash -c script` proxied (default workspace-write on `cwd`); resolves after the bridge is gone. */
async function runProxied(
  script: string,
  cwd: string,
  context: SandboxContext = { profile: 'workspace-write', network: 'proxied' },
): Promise<Run> {
  const result = await spawnProcess({
    command: ['/bin/bash', '-c', script],
    cwd,
    env: childEnv(),
    sandbox: sandboxFromContext(context, cwd, { env: {} }),
    tty: false,
    stdinOpen: false,
    managedNetwork: { proxy },
  });
  await using child = result.process;
  let stdout = '';
  let stderr = '';
  for await (const chunk of child.output()) {
    if (chunk.stream === 'stderr') stderr += Buffer.from(chunk.bytes);
    else stdout += Buffer.from(chunk.bytes);
  }
  const { exitCode } = await child.closed;
  await result.network?.closed;
  return { result, exitCode, stdout, stderr };
}

/** `name=<code>` lines printed by the scripts. */
function codes(stdout: string): Record<string, string> {
  return Object.fromEntries([...stdout.matchAll(/^(\w+)=(\S*)$/gm)].map((m) => [m[1], m[2]]));
}

describe('proxied network under bubblewrap', () => {
  test('allowed hosts through the proxy; denied ones get the 403; bypassing the proxy fails', async () => {
    using ws = tempDir();
    const elsewhere = await startOrigin();
    try {
      const port = origin.port;
      const script = [
        `curl -sS --max-time 20 http://allowed.test:${port}/in; c=$?; echo; echo allowed=$c`,
        `curl -sS --max-time 20 http://denied.test:${port}/no; c=$?; echo; echo denied=$c`,
        `curl -sS --max-time 20 -x "$ALL_PROXY" http://allowed.test:${port}/socks; c=$?; echo; echo socks=$c`,
        `curl -sS --max-time 20 http://127.0.0.1:${port}/mirror; c=$?; echo; echo mirror=$c`,
        `curl -sS --noproxy '*' --max-time 10 http://127.0.0.1:${elsewhere.port}/bypass; echo bypass=$?`,
        `curl -sS --noproxy '*' --max-time 10 http://allowed.test:${port}/dns; echo dns=$?`,
        'echo active=$CODEX_NETWORK_PROXY_ACTIVE',
        `echo disabled=\${CODEX_SANDBOX_NETWORK_DISABLED-unset}`,
        'echo proxy=$HTTP_PROXY',
      ].join('\n');
      const { result, exitCode, stdout, stderr } = await runProxied(script, ws.path);
      expect(exitCode, stderr).toBe(0);
      expect(result.sandboxType).toBe('linuxSeccomp');
      expect(stdout).toContain(`hello allowed.test:${port}/in`);
      expect(stdout).toContain(`hello allowed.test:${port}/socks`);
      expect(stdout).toContain(`hello 127.0.0.1:${port}/mirror`);
      expect(stdout).toContain(`execd network proxy: denied.test:${port} is denied by the network policy`);
      expect(codes(stdout)).toMatchObject({
        allowed: '0',
        denied: '0',
        socks: '0',
        mirror: '0',
        bypass: '7',
        dns: '6',
        active: '1',
        disabled: 'unset',
        proxy: 'http://127.0.0.1:3128',
      });
      expect(elsewhere.requests).toBe(0);
      expect(proxy.denials()).toEqual([
        expect.objectContaining({ host: 'denied.test', protocol: 'http', reason: 'denied' }),
      ]);
      // The bridge is gone once the command closed; the proxy is the caller's.
      expect(isProcessAlive(result.network!.bridge.pid)).toBe(false);
      expect(proxy.closed).toBe(false);
    } finally {
      await elsewhere.close();
    }
  });

  test('host Unix sockets stay unreachable, and the proxy socket directory is masked', async () => {
    using ws = tempDir();
    const path = join(ws.path, 'daemon.sock');
    const daemon = await listenUnixDaemon(path);
    try {
      const socketDir = dirname(proxy.httpSocketPath);
      const script = [
        `python3 - <<'PY'`,
        'import socket',
        'try:',
        `  s = socket.socket(socket.AF_UNIX); s.connect(${JSON.stringify(path)}); print("unix=CONNECTED")`,
        'except OSError as e:',
        '  print("unix=%d" % e.errno)',
        'PY',
        `curl -sS --max-time 10 --unix-socket ${path} http://x/; echo curlunix=$?`,
        `curl -sS --max-time 10 --unix-socket ${proxy.httpSocketPath} http://allowed.test/; echo proxysock=$?`,
        `echo listing=$(ls -A ${socketDir} | tr '\\n' ,)`,
        `rm -f ${proxy.httpSocketPath}; echo rm=$?`,
        `ln -s ${path} ${socketDir}/planted 2>/dev/null; echo planted=$?`,
      ].join('\n');
      for (const context of [
        { profile: 'workspace-write', network: 'proxied' },
        { profile: 'danger-full-access', network: 'proxied' },
      ] as const) {
        const { exitCode, stdout, stderr } = await runProxied(script, ws.path, context);
        expect(exitCode, stderr).toBe(0);
        expect(codes(stdout)).toMatchObject({
          unix: '1', // EPERM: no AF_UNIX socket can be created
          curlunix: '7',
          proxysock: '7',
          listing: '', // an empty tmpfs over the proxy's directory
        });
        expect(codes(stdout).planted).not.toBe('0');
        expect(daemon.connections).toBe(0);
        expect(existsSync(proxy.httpSocketPath)).toBe(true);
      }
    } finally {
      await daemon.close();
    }
  });

  test('a proxied command cannot run unconfined: mode forbid is refused before anything starts', async () => {
    using ws = tempDir();
    const error = await spawnProcess({
      command: ['/bin/true'],
      cwd: ws.path,
      env: childEnv(),
      sandbox: sandboxFromContext(
        { profile: 'workspace-write', network: 'proxied', mode: 'forbid' },
        ws.path,
      ),
      tty: false,
      stdinOpen: false,
      managedNetwork: { proxy },
    }).catch((caught: unknown) => caught);
    expect(ExecError.is(error) && error.code).toBe('unsupported');
    expect(proxy.closed).toBe(false);
  });

  test("if the bridge cannot start, nothing is spawned and the proxy stays the caller's", async () => {
    using ws = tempDir();
    const marker = join(ws.path, 'ran');
    const error = await spawnProcess({
      command: ['/bin/bash', '-c', `touch ${marker}`],
      cwd: ws.path,
      env: childEnv(),
      sandbox: sandboxFromContext({ profile: 'workspace-write', network: 'proxied' }, ws.path, { env: {} }),
      tty: false,
      stdinOpen: false,
      managedNetwork: { proxy, bridge: { bridgeScript: '/nonexistent/bridge.js' } },
    }).catch((caught: unknown) => caught);
    expect(ExecError.is(error) && error.code).toBe('spawnFailed');
    expect(existsSync(marker)).toBe(false);
    expect(proxy.closed).toBe(false);
  });

  test('the launch line: launcher, bridge prefix, bwrap without --unshare-net, proxy variables last', async () => {
    using ws = tempDir();
    const sandbox = sandboxFromContext({ profile: 'workspace-write', network: 'proxied' }, ws.path, {
      env: {},
    });
    const prefixArgv = ['/usr/bin/nsenter', '--target', '4242', '--net', '--'];
    const command = ['/bin/true', '--unshare-net'];
    const routed = await prepareSandboxCommand({
      command,
      cwd: ws.path,
      env: childEnv({ HTTP_PROXY: 'http://elsewhere' }),
      sandbox,
      tty: false,
      managedNetwork: {
        socketDir: proxy.socketDir,
        prefixArgv,
        env: { HTTP_PROXY: 'http://127.0.0.1:3128' },
      },
    });
    try {
      expect(routed.proxyRouted).toBe(true);
      const at = routed.argv.indexOf(prefixArgv[0]!);
      expect(routed.argv.slice(at, at + prefixArgv.length)).toEqual(prefixArgv);
      const bwrap = routed.argv.slice(at + prefixArgv.length);
      expect(bwrap[0]).toMatch(/\/bwrap$/);
      expect(bwrap.slice(-command.length)).toEqual(command);
      const flags = bwrap.slice(0, -command.length);
      expect(flags).not.toContain('--unshare-net');
      expect(flags.join(' ')).toContain(`--tmpfs ${proxy.socketDir} --remount-ro ${proxy.socketDir}`);
      const proxyValue = flags.lastIndexOf('HTTP_PROXY') + 1;
      expect(flags[proxyValue]).toBe('http://127.0.0.1:3128');
      expect(flags).not.toContain('http://elsewhere');
      expect(flags).not.toContain('CODEX_SANDBOX_NETWORK_DISABLED');
    } finally {
      await routed.release();
    }
    // Without a bridge, the same command keeps --unshare-net: proxied without a route is off.
    const off = await prepareSandboxCommand({ command, cwd: ws.path, env: childEnv(), sandbox, tty: false });
    try {
      expect(off.proxyRouted).toBe(false);
      expect(off.argv.slice(0, -command.length)).toContain('--unshare-net');
      expect(off.argv).not.toContain(prefixArgv[0]);
    } finally {
      await off.release();
    }
  });

  test('without a managed network, proxied is enforced as off', async () => {
    using ws = tempDir();
    const result = await spawnProcess({
      command: [
        '/bin/bash',
        '-c',
        `curl -sS --max-time 10 http://127.0.0.1:${origin.port}/; echo curl=$?; echo disabled=$CODEX_SANDBOX_NETWORK_DISABLED; echo proxy=\${HTTP_PROXY-unset}`,
      ],
      cwd: ws.path,
      env: childEnv(),
      sandbox: sandboxFromContext({ profile: 'workspace-write', network: 'proxied' }, ws.path),
      tty: false,
      stdinOpen: false,
    });
    expect(result.network).toBeUndefined();
    await using child = result.process;
    let stdout = '';
    for await (const chunk of child.output())
      if (chunk.stream === 'stdout') stdout += Buffer.from(chunk.bytes);
    await child.closed;
    expect(codes(stdout)).toMatchObject({ curl: '7', disabled: '1', proxy: 'unset' });
    expect(origin.requests).toBe(0);
  });

  test('a user-namespace bridge (what a non-root executor gets) works too', async () => {
    using ws = tempDir();
    const result = await spawnProcess({
      command: ['/bin/bash', '-c', `curl -sS --max-time 20 http://allowed.test:${origin.port}/userns`],
      cwd: ws.path,
      env: childEnv(),
      sandbox: sandboxFromContext({ profile: 'workspace-write', network: 'proxied' }, ws.path, { env: {} }),
      tty: false,
      stdinOpen: false,
      managedNetwork: { proxy, bridge: { userNamespace: true } },
    });
    await using child = result.process;
    let text = '';
    for await (const chunk of child.output()) text += Buffer.from(chunk.bytes);
    expect((await child.closed).exitCode, text).toBe(0);
    expect(text).toBe(`hello allowed.test:${origin.port}/userns`);
    await result.network?.closed;
  });

  test('a PTY command is proxied too, and its bridge goes away with it', async () => {
    using ws = tempDir();
    const result = await spawnProcess({
      command: ['/bin/bash', '-c', `curl -sS --max-time 20 http://allowed.test:${origin.port}/tty`],
      cwd: ws.path,
      env: childEnv(),
      sandbox: sandboxFromContext({ profile: 'read-only', network: 'proxied' }, ws.path),
      tty: true,
      stdinOpen: true,
      managedNetwork: { proxy },
    });
    await using child = result.process;
    let text = '';
    for await (const chunk of child.output()) text += Buffer.from(chunk.bytes);
    expect((await child.closed).exitCode).toBe(0);
    expect(text).toContain(`hello allowed.test:${origin.port}/tty`);
    await waitFor(() => !isProcessAlive(result.network!.bridge.pid), { what: 'the bridge to exit' });
  });
});
