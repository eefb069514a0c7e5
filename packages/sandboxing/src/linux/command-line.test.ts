import { expect, test } from 'vitest';
import { bwrapCommandLine } from './command-line.ts';
import { launcherShell } from './launcher.ts';

const PARTS = {
  filterPath: '/proc/1/fd/7',
  preamble: ['ulimit -f 8'],
  bwrap: '/usr/bin/bwrap',
  flags: ['--unshare-user', '--seccomp', '9', '--'],
  env: { PATH: '/bin', HTTP_PROXY: 'http://mine' },
  // The command's own arguments are never read nor rewritten, even when they look like flags.
  command: ['/bin/sh', '-c', 'x', '--unshare-net', '--'],
};

/** What follows the launcher's own arguments (bash, its options, script, label, filter path). */
function afterLauncher(argv: readonly string[]): readonly string[] {
  expect(argv[0]).toBe(launcherShell());
  expect(argv.slice(1, 4)).toEqual(['--noprofile', '--norc', '-c']);
  expect(argv[4]).toContain('ulimit -f 8');
  expect(argv.slice(5, 7)).toEqual(['execd-sandbox-launcher', '/proc/1/fd/7']);
  return argv.slice(7);
}

test('without a route: launcher -> bwrap -> the command environment -> flags -> command', () => {
  expect(afterLauncher(bwrapCommandLine(PARTS))).toEqual([
    '/usr/bin/bwrap',
    '--clearenv',
    '--setenv',
    'PATH',
    '/bin',
    '--setenv',
    'HTTP_PROXY',
    'http://mine',
    '--unshare-user',
    '--seccomp',
    '9',
    '--',
    '/bin/sh',
    '-c',
    'x',
    '--unshare-net',
    '--',
  ]);
});

test('with a route: the bridge prefix between launcher and bwrap; the proxy variables win', () => {
  const route = {
    prefixArgv: ['/usr/bin/nsenter', '--target', '42', '--net', '--'],
    env: { HTTP_PROXY: 'http://127.0.0.1:3128', NO_PROXY: 'localhost' },
  };
  expect(afterLauncher(bwrapCommandLine(PARTS, route))).toEqual([
    '/usr/bin/nsenter',
    '--target',
    '42',
    '--net',
    '--',
    '/usr/bin/bwrap',
    '--clearenv',
    '--setenv',
    'PATH',
    '/bin',
    '--setenv',
    'HTTP_PROXY',
    'http://127.0.0.1:3128',
    '--setenv',
    'NO_PROXY',
    'localhost',
    '--unshare-user',
    '--seccomp',
    '9',
    '--',
    '/bin/sh',
    '-c',
    'x',
    '--unshare-net',
    '--',
  ]);
});
