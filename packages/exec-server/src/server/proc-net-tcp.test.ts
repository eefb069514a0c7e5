import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { endianness, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { addressKey, findPeerSocketInode } from './proc-net-tcp.ts';

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
