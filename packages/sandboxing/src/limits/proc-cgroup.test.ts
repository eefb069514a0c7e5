import { describe, expect, test } from 'vitest';
import { cgroupDirectory, parseCgroupMounts, parseProcCgroup } from './proc-cgroup.ts';

const MOUNTINFO = [
  '30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755',
  '31 30 0:28 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:9 - cgroup cgroup rw,cpu,cpuacct',
  '34 30 0:31 /docker/abc /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory',
  '38 30 0:35 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup ro,pids',
  '40 30 0:37 / /sys/fs/cgroup/uni\\040fied rw,relatime - cgroup2 cgroup2 rw,nsdelegate',
  '41 22 0:38 / /proc rw - proc proc rw',
].join('\n');

describe('parseCgroupMounts', () => {
  test('keeps cgroup mounts with their controllers, root and unescaped mount point', () => {
    expect(parseCgroupMounts(MOUNTINFO)).toEqual([
      { version: 1, mountPoint: '/sys/fs/cgroup/cpu,cpuacct', root: '/', controllers: ['cpu', 'cpuacct'] },
      { version: 1, mountPoint: '/sys/fs/cgroup/memory', root: '/docker/abc', controllers: ['memory'] },
      { version: 1, mountPoint: '/sys/fs/cgroup/pids', root: '/', controllers: ['pids'] },
      { version: 2, mountPoint: '/sys/fs/cgroup/uni fied', root: '/', controllers: [] },
    ]);
  });
});

describe('parseProcCgroup', () => {
  test('reads v1 controller lists and the v2 line', () => {
    expect(
      parseProcCgroup('8:pids:/\n4:memory:/process_api/x\n1:name=systemd:/a:b\n0::/user.slice\n'),
    ).toEqual([
      { controllers: ['pids'], path: '/', version: 1 },
      { controllers: ['memory'], path: '/process_api/x', version: 1 },
      { controllers: ['name=systemd'], path: '/a:b', version: 1 },
      { controllers: [], path: '/user.slice', version: 2 },
    ]);
  });
});

describe('cgroupDirectory', () => {
  const mount = {
    version: 1 as const,
    mountPoint: '/sys/fs/cgroup/memory',
    root: '/docker/abc',
    controllers: [],
  };

  test('maps a path inside the mount root', () => {
    expect(cgroupDirectory(mount, '/docker/abc')).toBe('/sys/fs/cgroup/memory');
    expect(cgroupDirectory(mount, '/docker/abc/sub')).toBe('/sys/fs/cgroup/memory/sub');
    expect(cgroupDirectory({ ...mount, root: '/' }, '/a/b')).toBe('/sys/fs/cgroup/memory/a/b');
  });

  test('refuses paths the mount does not show', () => {
    expect(cgroupDirectory(mount, '/docker/other')).toBeUndefined();
    expect(cgroupDirectory(mount, '/')).toBeUndefined();
    expect(cgroupDirectory({ ...mount, root: '/' }, '/../outside')).toBeUndefined();
  });
});
