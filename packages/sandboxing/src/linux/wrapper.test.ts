import { expect, test } from 'vitest';
import {
  LAUNCHER_SHELL,
  SECCOMP_FD,
  splitLauncherEnv,
  splitSeccompLauncher,
  withSeccompLauncher,
} from './wrapper.ts';

test('the launcher opens the filter on fd 9 and execs the bubblewrap argv unchanged', () => {
  expect(withSeccompLauncher('/proc/1/fd/7', ['/usr/bin/bwrap', '--', 'echo', "it's"])).toEqual([
    LAUNCHER_SHELL,
    '-c',
    `exec "$@" ${SECCOMP_FD}<"$0"`,
    '/proc/1/fd/7',
    '/usr/bin/bwrap',
    '--',
    'echo',
    "it's",
  ]);
});

test('shell-startup variables are kept from the launcher and restored with --setenv', () => {
  const split = splitLauncherEnv({
    PATH: '/bin',
    BASH_ENV: '/x.sh',
    ENV: '/y.sh',
    SHELLOPTS: 'xtrace',
    PS4: '$(id)',
    'BASH_FUNC_exec%%': '() { :; }',
    MY_ENV: 'kept',
  });
  expect(split.env).toEqual({ PATH: '/bin', MY_ENV: 'kept' });
  expect(split.setenvFlags).toEqual([
    '--setenv',
    'BASH_ENV',
    '/x.sh',
    '--setenv',
    'ENV',
    '/y.sh',
    '--setenv',
    'SHELLOPTS',
    'xtrace',
    '--setenv',
    'PS4',
    '$(id)',
    '--setenv',
    'BASH_FUNC_exec%%',
    '() { :; }',
  ]);
});

test('splitSeccompLauncher undoes the launcher, and only the launcher', () => {
  const argv = withSeccompLauncher('/proc/1/fd/7', ['/usr/bin/bwrap', '--', 'true']);
  expect(splitSeccompLauncher(argv)).toEqual({
    filterPath: '/proc/1/fd/7',
    command: ['/usr/bin/bwrap', '--', 'true'],
  });
  expect(splitSeccompLauncher(['/usr/bin/bwrap', '--', 'true'])).toBeUndefined();
  expect(splitSeccompLauncher([LAUNCHER_SHELL, '-c', 'echo hi', 'x'])).toBeUndefined();
});
