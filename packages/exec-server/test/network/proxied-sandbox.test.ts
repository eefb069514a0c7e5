// `proxied` processes end to end through `process/start` on a LocalProcessTable: real bubblewrap,
// a real proxy and bridge per process, real local servers (names mapped by the proxy's resolver).
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ExecParams, fromUtf8, pathToFileUri } from '@execd/protocol';
import { ForkServer } from '@execd/pty-utils';
import { listenUnixDaemon, ProcessTracker } from '@execd/test-kit';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { LocalProcessTable } from '../../src/local/local-process-table.ts';
import type { ProcessNotification } from '../../src/types.ts';
import {
  expectNoNetworkLeftovers,
  listeningPipes,
  type Origin,
  startOrigin,
  TEST_RESOLVER,
} from './helpers.ts';

const tracker = new ProcessTracker();
const tables: LocalProcessTable[] = [];
let origin: Origin;
let workspace: string;
/** Proxy listeners before the test, for the mid-test check that a closed process left none. */
let pipesBefore = 0;
let savedTmpdir: string | undefined;

beforeAll(() => {
  // A private TMPDIR: the proxies' socket directories land in it (and it is a writable root of
  // the sandbox, so their masking is exercised), away from other suites on this machine.
  savedTmpdir = process.env.TMPDIR;
  process.env.TMPDIR = realpathSync(mkdtempSync(join(tmpdir(), 'execd-proxied-')));
});

afterAll(() => {
  const dir = process.env.TMPDIR;
  if (savedTmpdir === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmpdir;
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

beforeEach(async () => {
  pipesBefore = listeningPipes();
  origin = await startOrigin();
  workspace = realpathSync(mkdtempSync(join(process.env.TMPDIR ?? tmpdir(), 'ws-')));
});

afterEach(async () => {
  await Promise.all(tables.splice(0).map((table) => table.shutdown()));
  await origin.close();
  rmSync(workspace, { recursive: true, force: true });
});

/** The server's way (execd-server starts one): commands and their bridges' nsenter from a helper. */
const forkServer = await ForkServer.start();
afterAll(() => forkServer?.close());
/** Set per block: the same scenarios forked by this process and by the fork server. */
let useForkServer = false;

function newTable(): { table: LocalProcessTable; notifications: ProcessNotification[] } {
  const table = new LocalProcessTable({
    networkResolver: TEST_RESOLVER,
    exitedRetentionMs: 60_000,
    forkServer: useForkServer ? forkServer : undefined,
  });
  tables.push(table);
  const notifications: ProcessNotification[] = [];
  table.subscribe((notification) => notifications.push(notification));
  return { table, notifications };
}

function proxiedParams(processId: string, script: string, extra: Partial<ExecParams> = {}): ExecParams {
  return {
    processId,
    argv: ['/bin/bash', '-c', script],
    cwd: pathToFileUri(workspace),
    env: { PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8' },
    tty: false,
    pipeStdin: false,
    enforceManagedNetwork: false,
    sandbox: { profile: 'workspace-write', network: 'proxied' },
    networkProxy: { allowedDomains: ['allowed.test'], deniedDomains: ['denied.test'] },
    managedNetwork: { loopbackPorts: [origin.port], allowLocalBinding: false },
    ...extra,
  };
}

async function run(table: LocalProcessTable, params: ExecParams) {
  const started = await table.start(params);
  tracker.track(table);
  let afterSeq = 0;
  let text = '';
  for (;;) {
    const read = await table.read({ processId: params.processId, afterSeq, waitMs: 2_000 });
    text += fromUtf8(Buffer.concat(read.chunks.map((chunk) => chunk.chunk)));
    afterSeq = read.nextSeq - 1;
    if (read.closed) return { started, text, read };
  }
}

/** `name=<value>` lines printed by the scripts. */
function codes(text: string): Record<string, string> {
  return Object.fromEntries([...text.matchAll(/^(\w+)=(\S*)$/gm)].map((m) => [m[1], m[2]]));
}

for (const spawner of ['this process', 'the fork server'] as const)
  describe(`process/start with network: proxied, forked by ${spawner}`, () => {
    beforeAll(() => {
      useForkServer = spawner === 'the fork server';
      if (useForkServer && forkServer === undefined) throw new Error('no fork server here');
    });
    test('allowed hosts work through the proxy, denied ones get the 403, bypasses fail', async () => {
      const { table, notifications } = newTable();
      await using elsewhere = await startOrigin();
      const port = origin.port;
      const script = [
        `curl -sS --max-time 20 http://allowed.test:${port}/in; c=$?; echo; echo allowed=$c`,
        `curl -sS --max-time 20 http://denied.test:${port}/no; c=$?; echo; echo denied=$c`,
        `curl -sS --max-time 20 https://denied.test:${port}/tls 2>&1; c=$?; echo; echo connect=$c`,
        `curl -sS --noproxy '*' --max-time 10 http://127.0.0.1:${elsewhere.port}/bypass 2>&1; echo bypass=$?`,
        'echo active=$CODEX_NETWORK_PROXY_ACTIVE',
      ].join('\n');
      const { started, text, read } = await run(table, proxiedParams('p1', script));
      expect(started).toEqual({ processId: 'p1', sandboxType: 'linuxSeccomp' });
      expect(text).toContain(`hello allowed.test:${port}/in`);
      expect(text).toContain(`execd network proxy: denied.test:${port} is denied by the network policy`);
      expect(text).toContain('CONNECT tunnel failed, response 403');
      expect(codes(text)).toMatchObject({
        allowed: '0',
        denied: '0',
        connect: '56',
        bypass: '7',
        active: '1',
      });
      expect(elsewhere.requests).toBe(0);
      expect(read).toMatchObject({ exitCode: 0, sandboxDenied: false });
      const decisions = notifications.flatMap((n) =>
        n.method === 'network/policyDecision' ? [n.params] : [],
      );
      expect(decisions.map((d) => [d.request.protocol, d.request.host, d.decision, d.reason])).toEqual([
        ['http', 'allowed.test', 'allow', undefined],
        ['http', 'denied.test', 'deny', 'denied'],
        ['https_connect', 'denied.test', 'deny', 'denied'],
      ]);
      expect(table.networkDenials('p1')?.map((d) => d.host)).toEqual(['denied.test', 'denied.test']);
      // Spec §8.6: the decisions are notified before the exit, and the proxy and bridge are gone after the close.
      const methods = notifications.map((n) => n.method);
      expect(methods.lastIndexOf('network/policyDecision')).toBeLessThan(methods.indexOf('process/exited'));
      await expectNoNetworkLeftovers(pipesBefore);
    });

    test('a command failing on a denied host reports sandboxDenied', async () => {
      const { table } = newTable();
      const { read, text } = await run(
        table,
        proxiedParams('p2', `curl -sSf --max-time 20 http://denied.test:${origin.port}/`),
      );
      expect(read).toMatchObject({ exitCode: 22, sandboxDenied: true });
      expect(text).toContain('403');
    });

    test('host Unix sockets stay unreachable; the proxy sockets are hidden', async () => {
      const { table } = newTable();
      const path = join(workspace, 'daemon.sock');
      await using daemon = await listenUnixDaemon(path);
      const script = [
        `curl -sS --max-time 10 --unix-socket ${path} http://x/ 2>&1; echo unix=$?`,
        `ls -A ${process.env.TMPDIR} | grep -c '^execd-netproxy-' ; ls -A ${process.env.TMPDIR}/execd-netproxy-* | wc -w | sed 's/^/sockets=/'`,
      ].join('\n');
      const { text } = await run(table, proxiedParams('p3', script));
      expect(codes(text)).toMatchObject({ unix: '7', sockets: '0' });
      expect(daemon.connections).toBe(0);
    });

    test('a proxied process is never run unconfined: no sandbox selected is -32602', async () => {
      const { table } = newTable();
      const params = proxiedParams('p4', 'true', {
        sandbox: { profile: 'workspace-write', network: 'proxied', mode: 'forbid' },
      });
      const error = await table.start(params).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: 'invalidParams' });
      expect((error as Error).message).toMatch(/^sandbox is not available on this exec-server host: /);
      expect(table.list().processes).toEqual([]);
    });

    test('full and off are unchanged: no proxy, no bridge', async () => {
      const { table, notifications } = newTable();
      const script = `curl -sS --max-time 10 http://127.0.0.1:${origin.port}/direct 2>&1; c=$?; echo; echo code=$c; echo proxy=\${HTTP_PROXY-unset}`;
      const full = await run(
        table,
        proxiedParams('full', script, { sandbox: { profile: 'workspace-write', network: 'full' } }),
      );
      expect(full.text).toContain(`hello 127.0.0.1:${origin.port}/direct`);
      expect(codes(full.text)).toMatchObject({ code: '0', proxy: 'unset' });
      const off = await run(
        table,
        proxiedParams('off', script, { sandbox: { profile: 'workspace-write', network: 'off' } }),
      );
      expect(codes(off.text)).toMatchObject({ code: '7', proxy: 'unset' });
      expect(notifications.some((n) => n.method === 'network/policyDecision')).toBe(false);
    });
  });
