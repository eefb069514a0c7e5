import { X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import { ExecError } from '@execd/protocol';
import type { NetworkDenial } from '@execd/protocol/contract';
import { waitFor } from '@execd/test-kit';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  createStaticResolver,
  type NetworkDecider,
  type NetworkProxyOptions,
  startNetworkProxy,
} from '../src/index.ts';
import { curl, makeCertificate, type Origin, startOrigin, startTlsOrigin } from './helpers/index.ts';
import {
  connectTunnel,
  fetchDispatcherViaProxy,
  httpGetViaProxy,
  rawExchange,
} from './helpers/proxy-clients.ts';

/** `--add-host`-style names for the proxy's resolver: every test name is this machine. */
const HOSTS = {
  'allowed.test': '127.0.0.1',
  'denied.test': '127.0.0.1',
  'other.test': '127.0.0.1',
  'rebind.test': '127.0.0.1',
};

let origin: Origin;

beforeEach(async () => {
  origin = await startOrigin();
});

afterEach(async () => {
  await origin.close();
});

function proxyOptions(extra: NetworkProxyOptions = {}): NetworkProxyOptions {
  return {
    allowedDomains: ['allowed.test', 'rebind.test'],
    deniedDomains: ['denied.test'],
    loopbackPorts: [origin.port],
    resolver: createStaticResolver(HOSTS),
    tcp: true,
    ...extra,
  };
}

describe('HTTP forward proxy', () => {
  test('an allowed host works with curl, and the decision is recorded', async () => {
    await using proxy = await startNetworkProxy(proxyOptions());
    const result = await curl([
      '-x',
      `http://127.0.0.1:${proxy.httpAddress?.port}`,
      `http://allowed.test:${origin.port}/curl`,
    ]);
    expect(result).toMatchObject({ code: 0, stdout: `hello allowed.test:${origin.port}/curl` });
    expect(proxy.decisions()).toEqual([
      expect.objectContaining({
        protocol: 'http',
        host: 'allowed.test',
        port: origin.port,
        decision: 'allow',
        rule: 'allow:allowed.test',
      }),
    ]);
    expect(proxy.denials()).toEqual([]);
  });

  test('Node http.request works through the unix socket', async () => {
    await using proxy = await startNetworkProxy(proxyOptions({ tcp: false }));
    expect(proxy.httpAddress).toBeUndefined();
    const response = await httpGetViaProxy(
      proxy.httpSocketPath,
      `http://allowed.test:${origin.port}/node?q=1`,
    );
    expect(response).toEqual({ status: 200, body: `hello allowed.test:${origin.port}/node?q=1` });
  });

  test('Node fetch works through a CONNECT tunnel', async () => {
    await using proxy = await startNetworkProxy(proxyOptions());
    const dispatcher = await fetchDispatcherViaProxy(proxy.httpAddress?.port ?? 0);
    try {
      const response = await fetch(`http://allowed.test:${origin.port}/fetch`, { dispatcher } as RequestInit);
      expect(await response.text()).toBe(`hello allowed.test:${origin.port}/fetch`);
    } finally {
      await dispatcher.close();
    }
    expect(proxy.decisions()[0]).toMatchObject({
      protocol: 'https',
      host: 'allowed.test',
      decision: 'allow',
    });
  });

  test('request bodies are forwarded and upstream connections are reused', async () => {
    await using proxy = await startNetworkProxy(proxyOptions());
    const url = `http://allowed.test:${origin.port}/post`;
    const proxyUrl = `http://127.0.0.1:${proxy.httpAddress?.port}`;
    const result = await curl([
      '-x',
      proxyUrl,
      '--data-binary',
      'payload-123',
      url,
      '--next',
      '-x',
      proxyUrl,
      url,
    ]);
    expect(result.stdout).toBe(`payload-123hello allowed.test:${origin.port}/post`);
  });

  test('a denied host gets a 403 naming the host and the reason, and a structured denial', async () => {
    await using proxy = await startNetworkProxy(proxyOptions());
    const result = await curl([
      '-i',
      '-x',
      `http://127.0.0.1:${proxy.httpAddress?.port}`,
      `http://denied.test:${origin.port}/x`,
    ]);
    expect(result.stdout).toMatch(/^HTTP\/1\.1 403 Forbidden/);
    expect(result.stdout).toMatch(/x-proxy-error: blocked-by-denylist/i);
    expect(result.stdout).toContain(`denied.test:${origin.port} is denied by the network policy`);
    expect(result.stdout).toContain('reason: denied');
    expect(origin.requests).toBe(0);
    expect(proxy.denials()).toEqual([
      {
        kind: 'network',
        protocol: 'http',
        host: 'denied.test',
        port: origin.port,
        rule: 'deny:denied.test',
        reason: 'denied',
        message: `denied.test:${origin.port} is denied by the network policy`,
        timestampMs: expect.any(Number),
      },
    ]);
  });

  test('a host outside the allow list is denied (blocked-by-allowlist)', async () => {
    await using proxy = await startNetworkProxy(proxyOptions());
    const result = await curl([
      '-i',
      '-x',
      `http://127.0.0.1:${proxy.httpAddress?.port}`,
      `http://other.test:${origin.port}/`,
    ]);
    expect(result.stdout).toMatch(/^HTTP\/1\.1 403/);
    expect(result.stdout).toMatch(/x-proxy-error: blocked-by-allowlist/i);
    expect(proxy.denials()[0]).toMatchObject({ host: 'other.test', reason: 'notAllowed', rule: 'no-match' });
  });

  test('an unresolvable allowed name is a 502, not a denial', async () => {
    await using proxy = await startNetworkProxy(proxyOptions({ allowedDomains: ['*.invalid'] }));
    const result = await curl([
      '-i',
      '-x',
      `http://127.0.0.1:${proxy.httpAddress?.port}`,
      'http://nowhere.invalid/',
    ]);
    expect(result.stdout).toMatch(/^HTTP\/1\.1 502/);
    expect(proxy.denials()).toEqual([]);
  });

  test('an upgrade request is tunnelled after the policy check', async () => {
    await using proxy = await startNetworkProxy(proxyOptions());
    const upgrade = (host: string): string =>
      `GET http://${host}:${origin.port}/ws HTTP/1.1\r\nHost: ${host}:${origin.port}\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n`;
    const socket = net.connect(proxy.httpSocketPath);
    let received = '';
    socket.setEncoding('latin1').on('data', (text: string) => {
      received += text;
      if (received.includes('\r\n\r\n') && !received.includes('ping')) socket.write('ping');
    });
    socket.write(upgrade('allowed.test'));
    await waitFor(() => received.includes('ping'), { what: 'the echo' });
    socket.destroy();
    expect(received).toMatch(/^HTTP\/1\.1 101 Switching Protocols\r\n/);
    expect(received).toContain('X-Path: /ws');
    const denied = (await rawExchange({ path: proxy.httpSocketPath }, upgrade('denied.test'))).toString();
    expect(denied).toMatch(/^HTTP\/1\.1 403/);
  });

  test('origin-form requests are refused with 400', async () => {
    await using proxy = await startNetworkProxy(proxyOptions());
    const result = await curl(['-i', `http://127.0.0.1:${proxy.httpAddress?.port}/not-a-proxy-request`]);
    expect(result.stdout).toMatch(/^HTTP\/1\.1 400/);
  });
});

describe('local and private destinations', () => {
  test('an allowed name that resolves to loopback outside loopbackPorts is denied (DNS rebinding)', async () => {
    await using elsewhere = await startOrigin();
    await using proxy = await startNetworkProxy(proxyOptions());
    const proxyUrl = `http://127.0.0.1:${proxy.httpAddress?.port}`;
    const result = await curl(['-i', '-x', proxyUrl, `http://rebind.test:${elsewhere.port}/`]);
    expect(result.stdout).toMatch(/^HTTP\/1\.1 403/);
    expect(elsewhere.requests).toBe(0);
    expect(proxy.denials()[0]).toMatchObject({
      host: 'rebind.test',
      reason: 'notAllowedLocal',
      rule: 'resolved-local-address:127.0.0.1',
    });
  });

  test('IP literals: loopback only on loopbackPorts, private ranges denied', async () => {
    await using elsewhere = await startOrigin();
    await using proxy = await startNetworkProxy(proxyOptions({ allowedDomains: ['*'] }));
    const proxyUrl = `http://127.0.0.1:${proxy.httpAddress?.port}`;
    expect((await curl(['-x', proxyUrl, `http://127.0.0.1:${origin.port}/lit`])).stdout).toBe(
      `hello 127.0.0.1:${origin.port}/lit`,
    );
    expect((await curl(['-i', '-x', proxyUrl, `http://127.0.0.1:${elsewhere.port}/`])).stdout).toMatch(
      /^HTTP\/1\.1 403/,
    );
    expect((await curl(['-i', '-x', proxyUrl, 'http://169.254.169.254/latest/meta-data'])).stdout).toMatch(
      /^HTTP\/1\.1 403/,
    );
    expect((await curl(['-i', '-x', proxyUrl, 'http://[::ffff:10.0.0.1]/'])).stdout).toMatch(
      /^HTTP\/1\.1 403/,
    );
    expect(proxy.denials().map((d) => [d.host, d.reason])).toEqual([
      ['127.0.0.1', 'notAllowedLocal'],
      ['169.254.169.254', 'notAllowedLocal'],
      ['10.0.0.1', 'notAllowedLocal'],
    ]);
  });
});

describe('CONNECT', () => {
  test('a denied CONNECT gets a 403 with a body naming the host', async () => {
    await using proxy = await startNetworkProxy(proxyOptions());
    const reply = await rawExchange(
      { path: proxy.httpSocketPath },
      `CONNECT denied.test:${origin.port} HTTP/1.1\r\nHost: denied.test:${origin.port}\r\n\r\n`,
    );
    const text = reply.toString();
    expect(text).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n/);
    expect(text).toContain(`denied.test:${origin.port} is denied by the network policy`);
    expect(proxy.denials()[0]).toMatchObject({ protocol: 'https', host: 'denied.test', reason: 'denied' });
    const viaCurl = await curl([
      '-p',
      '-x',
      `http://127.0.0.1:${proxy.httpAddress?.port}`,
      `http://denied.test:${origin.port}/`,
    ]);
    expect(viaCurl.code).toBe(56);
  });

  test('HTTPS through CONNECT keeps end-to-end TLS: the client verifies the origin certificate', async () => {
    await using cert = await makeCertificate(['allowed.test']);
    await using secure = await startTlsOrigin(cert);
    await using proxy = await startNetworkProxy(proxyOptions({ loopbackPorts: [secure.port] }));
    const proxyUrl = `http://127.0.0.1:${proxy.httpAddress?.port}`;
    const result = await curl([
      '-x',
      proxyUrl,
      '--cacert',
      cert.certPath,
      `https://allowed.test:${secure.port}/tls`,
    ]);
    expect(result).toMatchObject({ code: 0, stdout: `hello allowed.test:${secure.port}/tls` });
    // The certificate the client sees through the tunnel is the origin's own one.
    const tunnel = await connectTunnel({ port: proxy.httpAddress?.port ?? 0 }, 'allowed.test', secure.port);
    const socket = tls.connect({ socket: tunnel, servername: 'allowed.test', ca: cert.cert });
    await new Promise<void>((resolve, reject) => {
      socket.once('secureConnect', resolve);
      socket.once('error', reject);
    });
    expect(socket.getPeerCertificate().fingerprint256).toBe(new X509Certificate(cert.cert).fingerprint256);
    socket.destroy();
    // Without the CA, verification fails: the proxy does not substitute a certificate of its own.
    const untrusted = await curl(['-x', proxyUrl, `https://allowed.test:${secure.port}/tls`]);
    expect(untrusted.code).toBe(60);
  });

  test('Node fetch over https through the tunnel', async () => {
    await using cert = await makeCertificate(['allowed.test']);
    await using secure = await startTlsOrigin(cert);
    await using proxy = await startNetworkProxy(proxyOptions({ loopbackPorts: [secure.port] }));
    const dispatcher = await fetchDispatcherViaProxy(proxy.httpAddress?.port ?? 0, cert.cert);
    try {
      const response = await fetch(`https://allowed.test:${secure.port}/fetch-tls`, {
        dispatcher,
      } as RequestInit);
      expect(await response.text()).toBe(`hello allowed.test:${secure.port}/fetch-tls`);
    } finally {
      await dispatcher.close();
    }
  });
});

describe('SOCKS5', () => {
  test('curl with socks5h reaches an allowed host; a denied one gets reply 0x02', async () => {
    await using proxy = await startNetworkProxy(proxyOptions());
    const socks = `socks5h://127.0.0.1:${proxy.socksAddress?.port}`;
    expect(await curl(['-x', socks, `http://allowed.test:${origin.port}/socks`])).toMatchObject({
      code: 0,
      stdout: `hello allowed.test:${origin.port}/socks`,
    });
    expect((await curl(['-x', socks, `http://denied.test:${origin.port}/`])).code).toBe(97);
    const name = [...Buffer.from('denied.test')];
    const reply = await rawExchange(
      { path: proxy.socksSocketPath },
      Uint8Array.from([5, 1, 0, 5, 1, 0, 3, name.length, ...name, origin.port >> 8, origin.port & 0xff]),
    );
    expect([...reply.subarray(0, 4)]).toEqual([5, 0, 5, 2]);
    expect(proxy.denials().map((d) => [d.protocol, d.host, d.reason])).toEqual([
      ['socks5', 'denied.test', 'denied'],
      ['socks5', 'denied.test', 'denied'],
    ]);
  });

  test('BIND is refused with 0x07 and a client without the no-auth method with 0xff', async () => {
    await using proxy = await startNetworkProxy(proxyOptions());
    const bind = await rawExchange(
      { path: proxy.socksSocketPath },
      Uint8Array.from([5, 1, 0, 5, 2, 0, 1, 127, 0, 0, 1, 0, 80]),
    );
    expect([...bind.subarray(0, 4)]).toEqual([5, 0, 5, 7]);
    const auth = await rawExchange({ path: proxy.socksSocketPath }, Uint8Array.from([5, 1, 2]));
    expect([...auth]).toEqual([5, 0xff]);
  });
});

describe('decider', () => {
  async function decide(decider: NetworkDecider, deciderTimeoutMs?: number) {
    const proxy = await startNetworkProxy(proxyOptions({ decider, deciderTimeoutMs }));
    const result = await curl([
      '-i',
      '-x',
      `http://127.0.0.1:${proxy.httpAddress?.port}`,
      `http://other.test:${origin.port}/d`,
    ]);
    return { proxy, result };
  }

  test('allow: the request goes through, and the answer is cached per host:port', async () => {
    const asked: unknown[] = [];
    const { proxy, result } = await decide(async (request) => {
      asked.push(request);
      return 'allow';
    });
    await using _ = proxy;
    expect(result.stdout).toContain(`hello other.test:${origin.port}/d`);
    await curl([
      '-x',
      `http://127.0.0.1:${proxy.httpAddress?.port}`,
      `http://other.test:${origin.port}/again`,
    ]);
    expect(asked).toEqual([{ protocol: 'http', host: 'other.test', port: origin.port }]);
    expect(proxy.decisions().map((d) => d.rule)).toEqual(['decider', 'decider']);
  });

  test('deny and ask become denials with the decider reason', async () => {
    const denied = await decide(async () => ({ type: 'deny', reason: 'not today' }));
    await using _a = denied.proxy;
    expect(denied.result.stdout).toMatch(/^HTTP\/1\.1 403/);
    expect(denied.result.stdout).toContain('not today');
    expect(denied.proxy.denials()[0]).toMatchObject({ reason: 'deciderDenied', rule: 'decider' });
    const ask = await decide(async () => ({ type: 'ask', reason: 'approve other.test?' }));
    await using _b = ask.proxy;
    expect(ask.proxy.denials()[0]).toMatchObject({
      reason: 'deciderAsk',
      message: expect.stringContaining('approve other.test?'),
    });
  });

  test('no answer within the timeout denies', async () => {
    const { proxy, result } = await decide(() => new Promise(() => {}), 100);
    await using _ = proxy;
    expect(result.stdout).toMatch(/^HTTP\/1\.1 403/);
    expect(proxy.denials()[0]).toMatchObject({ reason: 'deciderTimeout' });
  });

  test('the decider is not asked about denied or local destinations', async () => {
    let calls = 0;
    const { proxy } = await decide(async () => {
      calls++;
      return 'allow';
    });
    await using _ = proxy;
    calls = 0;
    const proxyUrl = `http://127.0.0.1:${proxy.httpAddress?.port}`;
    await curl(['-x', proxyUrl, `http://denied.test:${origin.port}/`]);
    await curl(['-x', proxyUrl, 'http://10.1.2.3/']);
    expect(calls).toBe(0);
  });

  test('a zero timeout is refused as the original does', async () => {
    await expect(startNetworkProxy({ deciderTimeoutMs: 0 })).rejects.toSatisfy(
      (error: unknown) => ExecError.is(error) && error.code === 'invalidParams',
    );
    await expect(startNetworkProxy({ allowedDomains: ['a*b'] })).rejects.toSatisfy(
      (error: unknown) => ExecError.is(error) && error.code === 'invalidParams',
    );
  });
});

describe('live denials and shutdown', () => {
  test('onDenial and watchDenials see denials as they happen', async () => {
    await using proxy = await startNetworkProxy(proxyOptions());
    const heard: NetworkDenial[] = [];
    const listener = proxy.onDenial((denial) => heard.push(denial));
    const iterated: NetworkDenial[] = [];
    const watching = (async () => {
      for await (const denial of proxy.watchDenials()) {
        iterated.push(denial);
        if (iterated.length === 2) break;
      }
    })();
    const proxyUrl = `http://127.0.0.1:${proxy.httpAddress?.port}`;
    await curl(['-x', proxyUrl, `http://denied.test:${origin.port}/1`]);
    await curl(['-x', proxyUrl, `http://other.test:${origin.port}/2`]);
    await watching;
    listener[Symbol.dispose]();
    await curl(['-x', proxyUrl, `http://denied.test:${origin.port}/3`]);
    expect(heard.map((d) => d.host)).toEqual(['denied.test', 'other.test']);
    expect(iterated).toEqual(heard);
    expect(proxy.denials()).toHaveLength(3);
  });

  test('close ends iterators, denies waiting requests, drops connections and removes the sockets', async () => {
    let asked = false;
    const decider: NetworkDecider = () => {
      asked = true;
      return new Promise(() => {});
    };
    const proxy = await startNetworkProxy(proxyOptions({ decider, deciderTimeoutMs: 60_000 }));
    const abort = new AbortController();
    const iterating = (async () => {
      const seen: NetworkDenial[] = [];
      for await (const denial of proxy.watchDenials({ cancelSignal: abort.signal })) seen.push(denial);
      return seen;
    })();
    const waiting = curl([
      '-i',
      '-x',
      `http://127.0.0.1:${proxy.httpAddress?.port}`,
      `http://other.test:${origin.port}/wait`,
    ]);
    // Waiting for the decider, not merely connected (a request not yet parsed gets no 403).
    await waitFor(() => asked, { what: 'the waiting request' });
    await proxy.close();
    await proxy.close();
    const result = await waiting;
    expect(result.stdout).toMatch(/^HTTP\/1\.1 403/);
    expect(await iterating).toEqual([expect.objectContaining({ reason: 'proxyClosed' })]);
    expect(proxy.activeConnections).toBe(0);
    expect(existsSync(proxy.httpSocketPath)).toBe(false);
    expect(existsSync(proxy.socksSocketPath)).toBe(false);
  });
});
