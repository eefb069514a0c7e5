import { existsSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ExecError } from '@execd/protocol';
import { isProcessRunning, waitFor } from '@execd/test-kit';
import { afterEach, beforeEach, describe, expect, inject, test } from 'vitest';
import {
  createStaticResolver,
  type NetworkProxyOptions,
  startBridge,
  startNetworkProxy,
} from '../src/index.ts';
import { runBehindBridge } from './helpers/bridge-run.ts';
import {
  BASE_ENV,
  bwrapArgv,
  makeCertificate,
  type Origin,
  run,
  spawnChild,
  startOrigin,
  startTlsOrigin,
} from './helpers/index.ts';

const bridgeScript = inject('bridgeScript');
const indexBundle = inject('indexBundle');
const FIXTURE = new URL('./fixtures/managed-run.mjs', import.meta.url).pathname;

let origin: Origin;

beforeEach(async () => {
  origin = await startOrigin();
});

afterEach(async () => {
  await origin.close();
});

function proxyOptions(extra: NetworkProxyOptions = {}): NetworkProxyOptions {
  return {
    allowedDomains: ['allowed.test'],
    deniedDomains: ['denied.test'],
    loopbackPorts: [origin.port],
    resolver: createStaticResolver({ 'allowed.test': '127.0.0.1', 'denied.test': '127.0.0.1' }),
    ...extra,
  };
}

/** Runs `script` with `sh -c` in bwrap behind the managed network; resolves after full teardown. */
async function runSandboxed(script: string, extra: NetworkProxyOptions = {}, userNamespace?: boolean) {
  const proxy = await startNetworkProxy(proxyOptions(extra));
  const { bridge, child, exit } = await runBehindBridge({
    proxy,
    argv: bwrapArgv(['sh', '-c', script]),
    bridge: { bridgeScript, userNamespace },
  });
  return { proxy, bridge, child, exit, stdout: child.stdout(), stderr: child.stderr() };
}

/** `name=<curl exit code>` lines printed by the scripts below. */
function codes(stdout: string): Record<string, string> {
  return Object.fromEntries([...stdout.matchAll(/^(\w+)=(\d+)$/gm)].map((m) => [m[1], m[2]]));
}

describe("a command in bwrap inside the bridge's network namespace", () => {
  test('reaches allowed hosts only through the proxy; bypasses and DNS fail; denials are recorded', async () => {
    await using elsewhere = await startOrigin();
    const port = origin.port;
    const script = [
      `curl -sS http://allowed.test:${port}/via-proxy; c=$?; echo; echo allowed=$c`,
      `curl -sS http://denied.test:${port}/nope; c=$?; echo; echo denied=$c`,
      `curl -sS -x "$ALL_PROXY" http://allowed.test:${port}/via-socks; c=$?; echo; echo socks=$c`,
      `curl -sS --noproxy '*' --max-time 10 http://127.0.0.1:${elsewhere.port}/bypass; echo bypass=$?`,
      `curl -sS --noproxy '*' --max-time 10 http://allowed.test:${port}/dns; echo dns=$?`,
      `curl -sS http://127.0.0.1:${port}/mirror; c=$?; echo; echo mirror=$c`,
      `echo marker=$CODEX_NETWORK_PROXY_ACTIVE`,
      `tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\\n' ','; echo`,
    ].join('\n');
    const { proxy, bridge, exit, stdout, stderr } = await runSandboxed(script);
    expect(exit.code, stderr).toBe(0);
    expect(stdout).toContain(`hello allowed.test:${port}/via-proxy`);
    expect(stdout).toContain(`execd network proxy: denied.test:${port} is denied by the network policy`);
    expect(stdout).toContain(`hello allowed.test:${port}/via-socks`);
    expect(stdout).toContain(`hello 127.0.0.1:${port}/mirror`);
    expect(stdout).toContain('\nlo,\n');
    expect(codes(stdout)).toMatchObject({
      allowed: '0',
      socks: '0',
      mirror: '0',
      marker: '1',
      bypass: '7',
      dns: '6',
    });
    expect(stderr).toContain('Could not resolve host: allowed.test');
    expect(elsewhere.requests).toBe(0);
    expect(proxy.denials()).toEqual([
      expect.objectContaining({ kind: 'network', host: 'denied.test', protocol: 'http', reason: 'denied' }),
    ]);
    expect(proxy.decisions().map((d) => `${d.protocol} ${d.host} ${d.decision} ${d.rule}`)).toEqual([
      'http allowed.test allow allow:allowed.test',
      'http denied.test deny deny:denied.test',
      'socks5 allowed.test allow allow:allowed.test',
      'https 127.0.0.1 allow loopbackPorts',
    ]);
    expect(isProcessRunning(bridge.pid)).toBe(false);
  });

  test('HTTPS through HTTPS_PROXY keeps end-to-end TLS (curl verifies the origin certificate)', async () => {
    await using cert = await makeCertificate(['allowed.test']);
    await using secure = await startTlsOrigin(cert);
    const script = [
      `curl -sS --cacert ${cert.certPath} https://allowed.test:${secure.port}/tls; c=$?; echo; echo tls=$c`,
      `curl -sS https://allowed.test:${secure.port}/untrusted >/dev/null 2>&1; echo untrusted=$?`,
    ].join('\n');
    const { stdout, stderr } = await runSandboxed(script, { loopbackPorts: [secure.port] });
    expect(stdout, stderr).toContain(`hello allowed.test:${secure.port}/tls`);
    expect(codes(stdout)).toMatchObject({ tls: '0', untrusted: '60' });
  });

  test('the user-namespace variant (what non-root uses) also works as root', async () => {
    const { stdout, stderr } = await runSandboxed(
      `curl -sS http://allowed.test:${origin.port}/userns`,
      {},
      true,
    );
    expect(stdout, stderr).toBe(`hello allowed.test:${origin.port}/userns`);
  });

  test('root without CAP_SYS_ADMIN (as in a container) falls back to a user namespace', async () => {
    const result = await run('setpriv', [
      '--bounding-set=-sys_admin',
      '--inh-caps=-sys_admin',
      process.execPath,
      FIXTURE,
      indexBundle,
      bridgeScript,
      String(origin.port),
      'curl',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '{}') as {
      output: string;
      uid: number;
    };
    expect(report.uid).toBe(0);
    expect(report.output).toContain(`hello allowed.test:${origin.port}/unprivileged`);
  });

  test('an unprivileged user gets the same managed network', async () => {
    // Its sockets go to $XDG_RUNTIME_DIR/execd: a 0700 folder of its own, outside every temp folder.
    const runtimeDir = await mkdtemp('/run/execd-test-runtime-');
    await chown(runtimeDir, 65534, 65534);
    const result = await run(
      'setpriv',
      [
        '--reuid=65534',
        '--regid=65534',
        '--clear-groups',
        process.execPath,
        FIXTURE,
        indexBundle,
        bridgeScript,
        String(origin.port),
        'curl',
      ],
      { ...process.env, XDG_RUNTIME_DIR: runtimeDir },
    ).finally(() => rm(runtimeDir, { recursive: true, force: true }));
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '{}') as {
      output: string;
      uid: number;
      bridgePid: number;
    };
    expect(report.uid).toBe(65534);
    expect(report.output).toContain('65534\n');
    expect(report.output).toContain(`hello allowed.test:${origin.port}/unprivileged`);
    expect(report.output).toContain('direct=7');
    expect(isProcessRunning(report.bridgePid)).toBe(false);
  });
});

describe('lifetime', () => {
  test('the bridge and the proxy die with the process and leak no sockets, files or fds', async () => {
    const { proxy, bridge } = await runSandboxed('exit 3');
    expect(isProcessRunning(bridge.pid)).toBe(false);
    expect(proxy.closed).toBe(true);
    expect(proxy.activeConnections).toBe(0);
    expect(existsSync(proxy.httpSocketPath)).toBe(false);
    await bridge.close();
  });

  test('when the executor dies, the bridge and the sandbox die too', async () => {
    const { spawn } = await import('node:child_process');
    const executor = spawn(
      process.execPath,
      [FIXTURE, indexBundle, bridgeScript, String(origin.port), 'hold'],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    executor.stdout.setEncoding('utf8').on('data', (text: string) => {
      out += text;
    });
    const closed = new Promise((resolve) => executor.once('close', resolve));
    const pids = await waitFor(
      () =>
        out.includes('\n')
          ? (JSON.parse(out.split('\n')[0] ?? '') as {
              bridgePid: number;
              childPid: number;
              socketPath: string;
            })
          : undefined,
      {
        what: 'the executor to report its pids',
      },
    );
    expect(isProcessRunning(pids.bridgePid)).toBe(true);
    expect(isProcessRunning(pids.childPid)).toBe(true);
    executor.kill('SIGKILL');
    await closed;
    await waitFor(() => !isProcessRunning(pids.bridgePid) && !isProcessRunning(pids.childPid), {
      what: 'bridge and sandbox to exit',
    });
    // A SIGKILLed executor cannot remove its proxy's socket directory; the test does.
    await rm(dirname(pids.socketPath), { recursive: true, force: true });
  });

  test('if the bridge cannot start, startBridge fails with spawnFailed and leaves the proxy open', async () => {
    // Nothing can be spawned behind a bridge that does not exist (sandboxing's test/proxied has
    // "nothing is spawned"); closing the proxy is its owner's job (exec-server's ProcessNetwork).
    await using proxy = await startNetworkProxy(proxyOptions());
    const attempt = startBridge({ proxy, bridgeScript: '/nonexistent/bridge.js' });
    await expect(attempt).rejects.toSatisfy(
      (error: unknown) => ExecError.is(error) && error.code === 'spawnFailed',
    );
    expect(proxy.closed).toBe(false);
  });

  test('the bridge prefix also confines a command that is not sandboxed otherwise', async () => {
    await using proxy = await startNetworkProxy(proxyOptions());
    await using bridge = await startBridge({ proxy, bridgeScript });
    const script = `curl -sS http://allowed.test:${origin.port}/plain; echo; curl -sS --noproxy '*' --max-time 5 http://1.1.1.1/ >/dev/null 2>&1; echo direct=$?`;
    const child = spawnChild({
      argv: [...bridge.prefixArgv, 'sh', '-c', script],
      env: { ...BASE_ENV, ...bridge.env },
    });
    await child.exited;
    expect(child.stdout()).toContain(`hello allowed.test:${origin.port}/plain`);
    expect(codes(child.stdout())).toMatchObject({ direct: '7' });
  });
});
