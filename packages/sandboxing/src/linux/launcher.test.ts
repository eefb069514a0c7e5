import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { commandEnvFlags, LAUNCHER_ENV, launcherShell, SECCOMP_FD, withLauncher } from './launcher.ts';

test('the command environment crosses as --clearenv then --setenv pairs, loader variables included', () => {
  expect(commandEnvFlags({ PATH: '/bin', LD_PRELOAD: '/x.so', 'A B': '--' })).toEqual([
    '--clearenv',
    '--setenv',
    'PATH',
    '/bin',
    '--setenv',
    'LD_PRELOAD',
    '/x.so',
    '--setenv',
    'A B',
    '--',
  ]);
  expect(LAUNCHER_ENV).toEqual({ PATH: '/usr/sbin:/usr/bin:/sbin:/bin' });
  expect(Object.isFrozen(LAUNCHER_ENV)).toBe(true);
});

test('the launcher is a trusted bash with no startup files', () => {
  const argv = withLauncher('/proc/1/fd/3', ['/usr/bin/bwrap', '--', 'true']);
  expect(argv[0]).toBe(launcherShell());
  expect(argv.slice(1, 4)).toEqual(['--noprofile', '--norc', '-c']);
  expect(argv.slice(-4)).toEqual(['/proc/1/fd/3', '/usr/bin/bwrap', '--', 'true']);
});

test('the launcher closes inherited fds above 2 and opens the filter on fd 9, after the preamble', () => {
  const dir = mkdtempSync(join(tmpdir(), 'execd-launcher-'));
  try {
    const filter = join(dir, 'filter');
    writeFileSync(filter, 'FILTER');
    const leaked = join(dir, 'leaked');
    const fd = openSync(leaked, 'w');
    try {
      // The "bubblewrap" here is a shell that lists its fds and reads fd 9; fd 5 and fd 42 leak in.
      const argv = withLauncher(
        filter,
        [
          '/bin/bash',
          '-c',
          `ls /proc/self/fd | sort -n | tr '\\n' ' '; echo; cat <&${SECCOMP_FD}; echo; echo "$PREAMBLE"`,
        ],
        ['export PREAMBLE=ran'],
      );
      const stdio: (number | 'pipe' | 'ignore')[] = ['ignore', 'pipe', 'pipe', 'ignore', 'ignore', fd];
      while (stdio.length < 42) stdio.push('ignore');
      stdio.push(fd);
      const result = spawnSync(argv[0]!, argv.slice(1), {
        env: { ...LAUNCHER_ENV },
        stdio,
        encoding: 'utf8',
      });
      const [fds, content, preamble] = String(result.stdout).split('\n');
      // 0-2, the filter on 9, and the fd `ls` opens to list the folder; nothing inherited.
      expect(fds!.trim().split(/\s+/).map(Number)).toEqual([0, 1, 2, 3, 9]);
      expect(content).toBe('FILTER');
      expect(preamble).toBe('ran');
      expect(readFileSync(leaked, 'utf8')).toBe('');
    } finally {
      closeSync(fd);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
