import { networkInterfaces } from 'node:os';
import { describe, expect, test } from 'vitest';
import { createStaticResolver } from '../src/index.ts';
import { startExecutorServer, startOrigin } from './helpers/index.ts';
import { runProxied } from './helpers/run-proxied.ts';

/** `curl` of `url` (extra args first); prints `<name>=<curl exit code>` after the body. */
const curlLine = (name: string, args: string): string =>
  `curl -sS --max-time 20 ${args}; c=$?; echo; echo ${name}=$c`;

describe('the executor’s own ports', () => {
  test('"*" with allowLocalAddresses does not open a server of the executor on 127.0.0.1', async () => {
    await using executor = await startExecutorServer();
    const { proxy, stdout, codes } = await runProxied(
      curlLine(
        'lit',
        `-o /dev/null -w '%{http_code}' --noproxy '' -x "$HTTP_PROXY" http://127.0.0.1:${executor.port}/`,
      ),
      { allowedDomains: ['*'], allowLocalAddresses: true },
    );
    expect(codes.lit).toBe('0'); // curl got the proxy's 403
    expect(stdout).toMatch(/^403\s*\nlit=0$/m);
    expect(executor.requests).toBe(0);
    expect(proxy.denials().map((d) => [d.host, d.reason, d.rule])).toEqual([
      ['127.0.0.1', 'notAllowedLocal', 'local-address'],
    ]);
  });

  test('whatever the lists say (loopbackPorts, exact entries, names), its ports are refused', async () => {
    await using executor = await startExecutorServer();
    const port = executor.port;
    const script = [
      curlLine('mirror', `-o /dev/null -w '%{http_code}' http://127.0.0.1:${port}/mirror`),
      curlLine(
        'lit',
        `-o /dev/null -w '%{http_code}' --noproxy '' -x "$HTTP_PROXY" http://127.0.0.1:${port}/lit`,
      ),
      curlLine(
        'name',
        `-o /dev/null -w '%{http_code}' --noproxy '' -x "$HTTP_PROXY" http://executor.test:${port}/name`,
      ),
      curlLine(
        'local',
        `-o /dev/null -w '%{http_code}' --noproxy '' -x "$HTTP_PROXY" http://localhost:${port}/local`,
      ),
      curlLine('tunnel', `-p --noproxy '' -x "$HTTP_PROXY" http://127.0.0.1:${port}/tunnel`),
      curlLine('socks', `--noproxy '' -x "$ALL_PROXY" http://127.0.0.1:${port}/socks`),
    ].join('\n');
    const { proxy, stdout, stderr, codes } = await runProxied(script, {
      allowedDomains: ['*', `127.0.0.1:${port}`, `localhost:${port}`, 'executor.test'],
      allowLocalAddresses: true,
      loopbackPorts: [port],
      resolver: createStaticResolver({ 'executor.test': '127.0.0.1' }),
    });
    expect(executor.requests, stderr).toBe(0);
    expect(stdout).not.toContain('executor /');
    // The mirror and CONNECT tunnels are closed on a 403; plain requests get the 403 itself.
    expect(codes.mirror).not.toBe('0');
    expect(stdout).toMatch(/^403\s*\nlit=0$/m);
    expect(stdout).toMatch(/^403\s*\nname=0$/m);
    expect(stdout).toMatch(/^403\s*\nlocal=0$/m);
    expect(codes.tunnel).toBe('56');
    expect(codes.socks).toBe('97');
    const denials = proxy.denials();
    expect(denials).toHaveLength(6);
    for (const denial of denials) {
      expect(denial).toMatchObject({ port, reason: 'notAllowedLocal', rule: `executor-port:${port}` });
    }
  });

  const external = Object.values(networkInterfaces())
    .flat()
    .find((entry) => entry !== undefined && !entry.internal && entry.family === 'IPv4');
  test.skipIf(external === undefined)('also on this host’s other interface addresses', async () => {
    const address = external?.address ?? '';
    await using executor = await startExecutorServer('0.0.0.0');
    const { proxy, codes, stdout } = await runProxied(
      curlLine(
        'iface',
        `-o /dev/null -w '%{http_code}' --noproxy '' -x "$HTTP_PROXY" http://${address}:${executor.port}/`,
      ),
      { allowedDomains: [`${address}:${executor.port}`] },
    );
    expect(codes.iface).toBe('0');
    expect(stdout).toMatch(/^403\s*\niface=0$/m);
    expect(executor.requests).toBe(0);
    expect(proxy.denials()).toEqual([
      expect.objectContaining({ host: address, rule: `executor-port:${executor.port}` }),
    ]);
  });

  test('reservedLocalPorts are refused like the executor’s own', async () => {
    await using other = await startOrigin();
    const { proxy, stdout } = await runProxied(curlLine('reserved', `http://127.0.0.1:${other.port}/`), {
      loopbackPorts: [other.port],
      reservedLocalPorts: [other.port],
    });
    expect(stdout).not.toContain('hello');
    expect(other.requests).toBe(0);
    expect(proxy.denials()).toEqual([
      expect.objectContaining({ reason: 'notAllowedLocal', rule: `executor-port:${other.port}` }),
    ]);
  });
});

describe('a loopback port of another process (README: local destinations)', () => {
  test('"*" with allowLocalAddresses does not open it; loopbackPorts does', async () => {
    await using other = await startOrigin();
    const script = curlLine('lit', `--noproxy '' -x "$HTTP_PROXY" http://127.0.0.1:${other.port}/x`);
    const closed = await runProxied(script, { allowedDomains: ['*'], allowLocalAddresses: true });
    expect(closed.stdout).not.toContain('hello');
    expect(closed.proxy.denials()).toEqual([
      expect.objectContaining({ reason: 'notAllowedLocal', rule: 'local-address' }),
    ]);
    const open = await runProxied(script, { loopbackPorts: [other.port] });
    expect(open.stdout).toContain(`hello 127.0.0.1:${other.port}/x`);
    expect(open.proxy.decisions()).toEqual([
      expect.objectContaining({ decision: 'allow', rule: 'loopbackPorts' }),
    ]);
    expect(other.requests).toBe(1);
  });
});
