import { spawn } from 'node:child_process';
import net from 'node:net';
import { networkInterfaces } from 'node:os';
import { describe, expect, test } from 'vitest';
import {
  executorPortTarget,
  isExecutorPort,
  parseListeningSockets,
  scanExecutorPorts,
} from './executor-ports.ts';
import { isLocalAddress } from './local-address.ts';

async function listenHere(host = '127.0.0.1') {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    [Symbol.asyncDispose]: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A TCP listener in a child process (not the executor); resolves with its port. */
async function listenElsewhere() {
  const child = spawn(
    process.execPath,
    [
      '-e',
      "const s=require('net').createServer().listen(0,'127.0.0.1',()=>console.log(s.address().port));process.stdin.on('end',()=>process.exit(0)).resume()",
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const closed = new Promise((resolve) => child.once('close', resolve));
  const port = await new Promise<number>((resolve) => {
    child.stdout.setEncoding('utf8').once('data', (text: string) => resolve(Number(text.trim())));
  });
  return {
    port,
    [Symbol.asyncDispose]: async () => {
      child.stdin.end();
      await closed;
    },
  };
}

describe('the executor-port scan', () => {
  test('sees a listener of this process at once, but not one of another process', async () => {
    await using elsewhere = await listenElsewhere();
    // Prime the cache, then open a listener: a port that was not in the last scan is re-checked.
    await isExecutorPort(1);
    await using here = await listenHere();
    expect(await isExecutorPort(here.port)).toBe(true);
    expect(await isExecutorPort(elsewhere.port)).toBe(false);
    expect((await scanExecutorPorts()).has(here.port)).toBe(true);
  });

  test('an IPv6 listener counts too', async () => {
    await using here = await listenHere('::');
    expect(await isExecutorPort(here.port)).toBe(true);
    expect(await executorPortTarget(['::1'], here.port, new Set())).toBe('::1');
  });

  test('only local addresses on such ports are refused; reserved ports count as the executor’s', async () => {
    await using here = await listenHere();
    expect(await executorPortTarget(['127.0.0.1'], here.port, new Set())).toBe('127.0.0.1');
    expect(await executorPortTarget(['93.184.216.34', '127.0.0.2'], here.port, new Set())).toBe('127.0.0.2');
    expect(await executorPortTarget(['93.184.216.34'], here.port, new Set())).toBeUndefined();
    expect(await executorPortTarget(['127.0.0.1'], 9, new Set([9]))).toBe('127.0.0.1');
  });

  test('parses /proc/net/tcp listening entries by inode', () => {
    const table = [
      '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
      '   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0',
      '   1: 0100007F:A000 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 4343 1 0',
    ].join('\n');
    expect([...parseListeningSockets(table)]).toEqual([['4242', 8080]]);
  });
});

describe('isLocalAddress', () => {
  test.each([
    ['127.0.0.1', true],
    ['127.9.9.9', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    ['0.0.0.0', true],
    ['::', true],
    ['169.254.169.254', true],
    ['fe80::1', true],
    ['fe80::1%lo', true],
    ['93.184.216.34', false],
    ['2606:2800:220:1::1', false],
  ])('%s -> %s', (address, local) => {
    expect(isLocalAddress(address)).toBe(local);
  });

  test('every address of this host’s interfaces is local', () => {
    const addresses = Object.values(networkInterfaces()).flatMap((entries) =>
      (entries ?? []).map((entry) => entry.address),
    );
    expect(addresses.length).toBeGreaterThan(0);
    for (const address of addresses) expect(isLocalAddress(address), address).toBe(true);
  });
});
