import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { endianness, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { addressKey, findPeerSocketInode, parseProcNetTcpRow } from './proc-net-tcp.ts';

const LOOPBACK_V4 = '00000000000000000000ffff7f000001';

describe('addressKey', () => {
  test('IPv4, IPv4-mapped (dotted or hex) and IPv6 forms of one address are equal', () => {
    expect(addressKey('127.0.0.1')).toBe(LOOPBACK_V4);
    expect(addressKey('::ffff:127.0.0.1')).toBe(LOOPBACK_V4);
    expect(addressKey('::FFFF:7f00:1')).toBe(LOOPBACK_V4);
    expect(addressKey('::1')).toBe(`${'0'.repeat(31)}1`);
    expect(addressKey('fe80::1%eth0')).toBe(`fe80${'0'.repeat(27)}1`);
    expect(addressKey('1::')).toBe(`0001${'0'.repeat(28)}`);
    expect(addressKey('1:2:3:4:5:6:7:8')).toBe('00010002000300040005000600070008');
  });

  test.each(['', 'localhost', '1.2.3', '1:2:3:4:5:6:7:8:9'])('%j is not an address', (address) => {
    expect(addressKey(address)).toBeUndefined();
  });
});

describe('parseProcNetTcpRow', () => {
  test('an IPv4 row (little-endian words)', () => {
    const line =
      '   3: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 12345 1 0000000000000000 20 4 30 10 -1';
    expect(parseProcNetTcpRow(line, true)).toEqual({
      local: LOOPBACK_V4,
      localPort: 8080,
      remote: LOOPBACK_V4,
      remotePort: 50000,
      inode: 12345,
    });
  });

  test('an IPv6 row: ::1 and an IPv4-mapped address', () => {
    const line =
      '   0: 00000000000000000000000001000000:1F90 0000000000000000FFFF00000100007F:0050 01 00000000:00000000 00:00000000 00000000  1000        0 777 1 0000000000000000 20 4 1 10 -1';
    expect(parseProcNetTcpRow(line, true)).toEqual({
      local: `${'0'.repeat(31)}1`,
      localPort: 8080,
      remote: LOOPBACK_V4,
      remotePort: 80,
      inode: 777,
    });
  });

  test('big-endian words are taken as printed', () => {
    const row = parseProcNetTcpRow('0: 7F000001:0016 7F000001:0017 01 0:0 0:0 0 0 0 9', false);
    expect(row).toMatchObject({ local: LOOPBACK_V4, localPort: 22, remotePort: 23, inode: 9 });
  });

  test.each([
    '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
    '',
    '0: 0100007F 0100007F:1 01 0:0 0:0 0 0 0 9',
    '0: 0100:1 0100007F:1 01 0:0 0:0 0 0 0 9',
  ])('the header and junk are skipped: %j', (line) => {
    expect(parseProcNetTcpRow(line, true)).toBeUndefined();
  });
});

describe.skipIf(endianness() !== 'LE')('findPeerSocketInode over a stand-in /proc/net', () => {
  const HEADER =
    '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode';
  const row = (sl: number, local: string, remote: string, inode: number): string =>
    `  ${sl}: ${local} ${remote} 01 00000000:00000000 00:00000000 00000000     0        0 ${inode} 1 0000000000000000 20 4 30 10 -1`;

  test('connections asked about together are found in one read of the tables', async () => {
    const root = mkdtempSync(join(tmpdir(), 'execd-fake-net-'));
    try {
      mkdirSync(join(root, 'net'));
      // Clients on 127.0.0.1:5000 and :5001 connected to a server on 127.0.0.1:8080; each
      // connection has the client's row (the one looked for) and the server's.
      writeFileSync(
        join(root, 'net', 'tcp'),
        [
          HEADER,
          row(0, '0100007F:1F90', '0100007F:1388', 100),
          row(1, '0100007F:1388', '0100007F:1F90', 111),
          row(2, '0100007F:1389', '0100007F:1F90', 222),
          row(3, '0100007F:138A', '0100007F:1F90', 0), // TIME_WAIT: nobody holds it
          '',
        ].join('\n'),
      );
      const self = { address: '127.0.0.1', port: 8080 };
      const signal = AbortSignal.timeout(10_000);
      const found = await Promise.all(
        [5000, 5001, 5002, 5003].map((port) =>
          findPeerSocketInode({ address: '::ffff:127.0.0.1', port }, self, signal, root),
        ),
      );
      expect(found).toEqual([111, 222, undefined, undefined]); // no tcp6 table: no more rows
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
