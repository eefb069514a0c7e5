import { expect, test } from 'vitest';
import type { FileSystemPlan } from '../file-system-plan.ts';
import { buildBwrapArgs } from './bwrap-args.ts';

const WORKSPACE: FileSystemPlan = {
  fullDiskWrite: false,
  cwd: '/ws',
  writableRoots: [
    { root: '/tmp', readOnly: [] },
    {
      root: '/ws',
      readOnly: [
        { path: '/ws/.git', type: 'dir' },
        { path: '/ws/.codex', type: 'missing' },
      ],
    },
  ],
};

test('workspace-write, network off, pipes: the full flag list in order', () => {
  expect(buildBwrapArgs({ plan: WORKSPACE, networkDisabled: true, newSession: true, seccompFd: 9 })).toEqual([
    '--new-session',
    '--die-with-parent',
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--bind',
    '/tmp',
    '/tmp',
    '--bind',
    '/ws',
    '/ws',
    '--ro-bind',
    '/ws/.git',
    '/ws/.git',
    '--tmpfs',
    '/ws/.codex',
    '--remount-ro',
    '/ws/.codex',
    '--unshare-user',
    '--disable-userns',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-net',
    '--proc',
    '/proc',
    '--ro-bind',
    '/proc/sys',
    '/proc/sys',
    '--chdir',
    '/ws',
    '--seccomp',
    '9',
    '--cap-drop',
    'ALL',
    '--',
  ]);
});

test('a PTY child keeps its session (job control); network on keeps the network namespace', () => {
  const args = buildBwrapArgs({ plan: WORKSPACE, networkDisabled: false, newSession: false });
  expect(args).not.toContain('--new-session');
  expect(args).not.toContain('--unshare-net');
  expect(args).not.toContain('--seccomp');
  expect(args.slice(0, 1)).toEqual(['--die-with-parent']);
  expect(args.at(-1)).toBe('--');
});

test('read-only: nothing is bound writable', () => {
  const args = buildBwrapArgs({
    plan: { fullDiskWrite: false, cwd: '/x', writableRoots: [] },
    networkDisabled: true,
    newSession: true,
  });
  expect(args).not.toContain('--bind');
  expect(args.slice(2, 7)).toEqual(['--ro-bind', '/', '/', '--dev', '/dev']);
});

test('full disk write with the network off: the original shape plus the hardening', () => {
  const args = buildBwrapArgs({
    plan: { fullDiskWrite: true, cwd: '/x', writableRoots: [] },
    networkDisabled: true,
    newSession: true,
  });
  expect(args.slice(2, 10)).toEqual([
    '--bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--bind-try',
    '/dev/shm',
    '/dev/shm',
  ]);
  expect(args).toContain('--unshare-net');
});

test('a writable root above /dev and /sys does not expose the host devices or sysfs', () => {
  const args = buildBwrapArgs({
    plan: { fullDiskWrite: false, cwd: '/', writableRoots: [{ root: '/', readOnly: [] }] },
    networkDisabled: false,
    newSession: true,
  });
  const text = args.join(' ');
  expect(text).toContain('--bind / / --dev /dev --ro-bind /sys /sys');
});

test('fallbacks: no fresh procfs, no --disable-userns', () => {
  const args = buildBwrapArgs({
    plan: WORKSPACE,
    networkDisabled: true,
    newSession: true,
    mountProc: false,
    disableUserns: false,
  });
  expect(args).not.toContain('--proc');
  expect(args).not.toContain('--disable-userns');
  expect(args.join(' ')).toContain('--ro-bind /proc/sys /proc/sys');
});

test('masked directories get an empty read-only tmpfs after every bind (also under full disk write)', () => {
  for (const plan of [WORKSPACE, { fullDiskWrite: true, cwd: '/x', writableRoots: [] }]) {
    const args = buildBwrapArgs({
      plan,
      networkDisabled: true,
      newSession: true,
      maskedDirs: ['/tmp/execd-netproxy-abc'],
    });
    const text = args.join(' ');
    const mask = '--tmpfs /tmp/execd-netproxy-abc --remount-ro /tmp/execd-netproxy-abc';
    expect(text).toContain(mask);
    expect(text.indexOf(mask)).toBeGreaterThan(
      Math.max(text.lastIndexOf('--bind '), text.lastIndexOf('/ws/.codex')),
    );
    expect(text.indexOf(mask)).toBeLessThan(text.indexOf('--unshare-user'));
  }
});

test('restricted read and denied paths: an empty root, readable roots, then masks around the binds', () => {
  const plan: FileSystemPlan = {
    fullDiskWrite: false,
    cwd: '/home/me/ws',
    readableRoots: ['/usr', '/etc', '/usr/lib', '/dev/shm'],
    writableRoots: [{ root: '/home/me/ws', readOnly: [] }],
    denied: [
      { path: '/home/me', kind: 'dir' },
      { path: '/home/me/ws/secret', kind: 'file' },
      { path: '/home/me/ws/keys', kind: 'dir' },
      { path: '/home/me/ws/later', kind: 'missing' },
    ],
  };
  const args = buildBwrapArgs({ plan, networkDisabled: true, newSession: false, deniedFile: '/x/denied' });
  const fs = args.slice(args.indexOf('--die-with-parent') + 1, args.indexOf('--unshare-user'));
  expect(fs).toEqual([
    ...['--tmpfs', '/', '--dev', '/dev'],
    ...['--ro-bind', '/usr', '/usr', '--ro-bind', '/etc', '/etc', '--ro-bind', '/usr/lib', '/usr/lib'],
    // A denied folder holding a writable root: traversable, with the root's mount point, first.
    ...['--perms', '0111', '--tmpfs', '/home/me', '--dir', '/home/me/ws', '--remount-ro', '/home/me'],
    ...['--bind', '/home/me/ws', '/home/me/ws'],
    ...['--ro-bind', '/x/denied', '/home/me/ws/secret'],
    ...['--perms', '0000', '--tmpfs', '/home/me/ws/keys', '--remount-ro', '/home/me/ws/keys'],
    ...['--perms', '0000', '--tmpfs', '/home/me/ws/later', '--remount-ro', '/home/me/ws/later'],
  ]);
  expect(() => buildBwrapArgs({ plan, networkDisabled: true, newSession: false })).toThrow(/deniedFile/);
});

test('a denied path on or under a read-only carve-out is masked again after it (deny wins over read)', () => {
  const plan: FileSystemPlan = {
    fullDiskWrite: false,
    cwd: '/ws',
    writableRoots: [{ root: '/ws', readOnly: [{ path: '/ws/conf', type: 'dir' }] }],
    denied: [
      { path: '/ws/conf/keys/secret', kind: 'file' },
      { path: '/ws/other/secret', kind: 'file' },
    ],
  };
  const args = buildBwrapArgs({ plan, networkDisabled: true, newSession: false, deniedFile: '/x/denied' });
  const fs = args.slice(args.indexOf('--die-with-parent') + 1, args.indexOf('--unshare-user'));
  expect(fs).toEqual([
    ...['--ro-bind', '/', '/', '--dev', '/dev', '--bind', '/ws', '/ws'],
    ...['--ro-bind', '/x/denied', '/ws/conf/keys/secret', '--ro-bind', '/x/denied', '/ws/other/secret'],
    ...['--ro-bind', '/ws/conf', '/ws/conf'],
    // The carve-out was bound from the host's tree, over the first mask: it is made again.
    ...['--ro-bind', '/x/denied', '/ws/conf/keys/secret'],
  ]);
});
