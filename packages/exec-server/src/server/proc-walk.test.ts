// The walks of /proc over stand-in files: the rows they match, the owners they name, and the
// slices they run in. Through the shared walks: proc-net-tcp.test.ts, socket-owner.test.ts and
// local-peer.test.ts (the real /proc).
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { findOwners, findRows, runInSlices, type Walk } from './proc-walk.ts';

const LOOPBACK_V4 = '00000000000000000000ffff7f000001';
const LOOPBACK_V6 = `${'0'.repeat(31)}1`;
const HEADER =
  '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode';
const row = (sl: number, local: string, remote: string, inode: number): string =>
  `${String(sl).padStart(4)}: ${local} ${remote} 01 00000000:00000000 00:00000000 00000000     0        0 ${inode} 1 0000000000000000 20 4 30 10 -1`;

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function procWith(tables: { tcp?: string[]; tcp6?: string[] }): string {
  const root = mkdtempSync(join(tmpdir(), 'execd-fake-net-'));
  roots.push(root);
  mkdirSync(join(root, 'net'));
  for (const [name, lines] of Object.entries(tables))
    writeFileSync(join(root, 'net', name), [...lines, ''].join('\n'));
  return root;
}

/** Runs a walk to its end in one go. */
function run<T>(walk: Walk<T>): T {
  for (;;) {
    const step = walk.next();
    if (step.done === true) return step.value;
  }
}

const rows = async (
  request: Omit<Parameters<typeof findRows>[0], 'abandoned'>,
): Promise<[string, number][]> => [...(await findRows({ ...request, abandoned: () => false }))];

describe('findRows', () => {
  test('IPv4 rows (little-endian words): the peer end of each connection, not TIME_WAIT ones', async () => {
    const procRoot = procWith({
      tcp: [
        HEADER,
        row(0, '0100007F:1F90', '0100007F:C350', 100), // the server's own end
        row(1, '0100007F:C350', '0100007F:1F90', 111),
        row(10000, '0100007f:c351', '0100007f:1f90', 222), // a wide sl, lowercase digits
        row(3, '0100007F:C352', '0100007F:1F90', 0), // TIME_WAIT: nobody holds it
        'junk',
        '0: 0100007F 0100007F:1 01',
        '',
      ],
    });
    const keys = [50000, 50001, 50002, 50003].map((port) => `${LOOPBACK_V4}.${port}>${LOOPBACK_V4}.8080`);
    expect(await rows({ procRoot, keys, maxBytes: 1 << 20, littleEndian: true })).toEqual([
      [keys[0], 111],
      [keys[1], 222],
    ]);
  });

  test('IPv6 rows: ::1 and an IPv4-mapped address, as tcp6 prints them', async () => {
    const procRoot = procWith({
      tcp: [HEADER],
      tcp6: [
        HEADER,
        row(0, '00000000000000000000000001000000:C350', '00000000000000000000000001000000:1F90', 777),
        row(1, '0000000000000000FFFF00000100007F:C351', '0000000000000000FFFF00000100007F:1F90', 778),
      ],
    });
    const v6 = `${LOOPBACK_V6}.50000>${LOOPBACK_V6}.8080`;
    const mapped = `${LOOPBACK_V4}.50001>${LOOPBACK_V4}.8080`;
    const found = await rows({ procRoot, keys: [v6, mapped], maxBytes: 1 << 20, littleEndian: true });
    expect(new Map(found)).toEqual(
      new Map([
        [v6, 777],
        [mapped, 778],
      ]),
    );
  });

  test('big-endian words are matched as printed', async () => {
    const procRoot = procWith({ tcp: ['0: 7F000001:0016 7F000001:0017 01 0:0 0:0 0 0 0 9'] });
    const key = `${LOOPBACK_V4}.22>${LOOPBACK_V4}.23`;
    expect(await rows({ procRoot, keys: [key], maxBytes: 1 << 20, littleEndian: false })).toEqual([[key, 9]]);
  });

  test('a table larger than the bound fails the request; missing tables have no rows', async () => {
    const procRoot = procWith({
      tcp: [HEADER, ...Array.from({ length: 100 }, (_, i) => row(i, '0100007F:0001', '0100007F:0002', 0))],
    });
    const key = `${LOOPBACK_V4}.9>${LOOPBACK_V4}.8080`;
    await expect(rows({ procRoot, keys: [key], maxBytes: 4096, littleEndian: true })).rejects.toThrow(
      /larger than 4096/,
    );
    expect(
      await rows({
        procRoot: join(procRoot, 'none'),
        keys: [key],
        maxBytes: 4096,
        littleEndian: true,
      }),
    ).toEqual([]);
  });
});

describe('findOwners', () => {
  function fakeProc(pids: number, socketsEach: number): string {
    const root = mkdtempSync(join(tmpdir(), 'execd-fake-proc-'));
    roots.push(root);
    for (const pid of ['self', ...Array.from({ length: pids }, (_, i) => String(100 + i))]) {
      mkdirSync(join(root, pid, 'fd'), { recursive: true });
      mkdirSync(join(root, pid, 'ns'));
      symlinkSync('user:[1]', join(root, pid, 'ns', 'user'));
      symlinkSync('pid:[2]', join(root, pid, 'ns', 'pid'));
      for (let fd = 0; fd < socketsEach; fd++)
        symlinkSync(`socket:[${fd + 1000}]`, join(root, pid, 'fd', String(fd)));
    }
    return root;
  }

  test('this process first, then the newest holder of our namespaces', () => {
    const procRoot = fakeProc(3, 2);
    const owners = run(findOwners({ procRoot, targets: ['socket:[1000]', 'socket:[5]'], selfPid: 42 }));
    expect([...owners]).toEqual([['socket:[1000]', { kind: 'host', pid: 42 }]]);
    rmSync(join(procRoot, 'self', 'fd', '0'));
    const later = run(findOwners({ procRoot, targets: ['socket:[1000]'], selfPid: 42 }));
    expect([...later]).toEqual([['socket:[1000]', { kind: 'host', pid: 102 }]]);
  });
});

describe('runInSlices', () => {
  /** A walk of `steps` pauses that counts how many times it ran between two turns. */
  function* counting(steps: number, turns: number[]): Walk<string> {
    let turn = 0;
    setImmediate(function tick() {
      turn++;
      if (turn < 10_000) setImmediate(tick);
    });
    for (let step = 0; step < steps; step++) {
      turns.push(turn);
      const until = performance.now() + 0.05;
      while (performance.now() < until) {}
      yield;
    }
    return 'done';
  }

  test('a long walk is spread over turns of the event loop and returns its answer', async () => {
    const turns: number[] = [];
    expect(await runInSlices(counting(200, turns), () => false)).toBe('done');
    // 200 steps of 50 us: about 10 ms of work, at most ~1 ms of it per turn.
    expect(new Set(turns).size).toBeGreaterThan(1);
  });

  test('a walk whose callers all gave up stops at the next slice, its folders closed', async () => {
    const procRoot = mkdtempSync(join(tmpdir(), 'execd-fake-proc-'));
    roots.push(procRoot);
    mkdirSync(join(procRoot, 'self', 'fd'), { recursive: true });
    for (let fd = 0; fd < 2_000; fd++)
      symlinkSync(`socket:[${fd}]`, join(procRoot, 'self', 'fd', String(fd)));
    const walk = findOwners({ procRoot, targets: ['socket:[99999]'], selfPid: 42 });
    let abandoned = false;
    const result = runInSlices(walk, () => abandoned);
    abandoned = true;
    await expect(result).rejects.toThrow('the walk was given up');
    expect(walk.next()).toEqual({ done: true, value: undefined });
  });

  test('what a walk throws rejects it', async () => {
    function* failing(): Walk<number> {
      yield;
      throw new Error('/proc went away');
    }
    await expect(runInSlices(failing(), () => false)).rejects.toThrow('/proc went away');
  });
});
