import { describe, expect, test } from 'vitest';
import { isBwrapArgv, shareBridgeNetwork } from './bwrap-argv.ts';
import { proxyEnvironment } from './proxy-env.ts';

describe('shareBridgeNetwork', () => {
  test('drops --unshare-net among bwrap options and keeps everything else in order', () => {
    const argv = [
      '/usr/bin/bwrap',
      '--ro-bind',
      '/',
      '/',
      '--unshare-user',
      '--unshare-net',
      '--proc',
      '/proc',
      '--',
      'sh',
      '-c',
      'x',
    ];
    expect(shareBridgeNetwork(argv)).toEqual([
      '/usr/bin/bwrap',
      '--ro-bind',
      '/',
      '/',
      '--unshare-user',
      '--proc',
      '/proc',
      '--',
      'sh',
      '-c',
      'x',
    ]);
  });

  test('adds --share-net after --unshare-all', () => {
    expect(shareBridgeNetwork(['bwrap', '--unshare-all', '--', 'true'])).toEqual([
      'bwrap',
      '--unshare-all',
      '--share-net',
      '--',
      'true',
    ]);
  });

  test('option arguments and the command are never rewritten', () => {
    const argv = [
      'bwrap',
      '--setenv',
      'X',
      '--unshare-net',
      '--bind',
      '--unshare-net',
      '/x',
      '--unshare-net',
      'cmd',
      '--unshare-net',
    ];
    expect(shareBridgeNetwork(argv)).toEqual([
      'bwrap',
      '--setenv',
      'X',
      '--unshare-net',
      '--bind',
      '--unshare-net',
      '/x',
      'cmd',
      '--unshare-net',
    ]);
  });

  test('finds bwrap behind the seccomp launcher of the sandboxing package', () => {
    const launcher = ['/bin/sh', '-c', 'exec "$@" 9<"$0"', '/tmp/filter'];
    const argv = [
      ...launcher,
      '/usr/bin/bwrap',
      '--unshare-pid',
      '--unshare-net',
      '--seccomp',
      '9',
      '--',
      'curl',
      'x',
    ];
    expect(shareBridgeNetwork(argv)).toEqual([
      ...launcher,
      '/usr/bin/bwrap',
      '--unshare-pid',
      '--seccomp',
      '9',
      '--',
      'curl',
      'x',
    ]);
  });

  test('a command that is not bwrap is unchanged', () => {
    expect(isBwrapArgv(['sh', '-c', 'true'])).toBe(false);
    expect(shareBridgeNetwork(['sh', '--unshare-net'])).toEqual(['sh', '--unshare-net']);
    // "bwrap" deep in a command's arguments is not a launcher prefix.
    const deep = ['env', 'A=1', 'B=2', 'C=3', 'D=4', 'bwrap', '--unshare-net'];
    expect(shareBridgeNetwork(deep)).toEqual(deep);
  });
});

test('proxyEnvironment names the bridge ports', () => {
  const env = proxyEnvironment({ httpPort: 3128, socksPort: 1080 });
  expect(env).toMatchObject({
    HTTP_PROXY: 'http://127.0.0.1:3128',
    https_proxy: 'http://127.0.0.1:3128',
    ALL_PROXY: 'socks5h://127.0.0.1:1080',
    NO_PROXY: 'localhost,127.0.0.1,::1',
    CODEX_NETWORK_PROXY_ACTIVE: '1',
  });
});
