import { describe, expect, test } from 'vitest';
import { isLikelySandboxDenied } from './denial.ts';
import { describeSandboxDenial } from './denial-details.ts';

const out = (exitCode: number, stderr = '', stdout = '', aggregated = `${stdout}${stderr}`) => ({
  exitCode,
  stdout,
  stderr,
  aggregated,
});

// The original's core/src/exec_tests.rs sandbox_detection_* cases (spec §8.10).
describe('isLikelySandboxDenied (as the original)', () => {
  test('sandbox_detection_requires_keywords', () => {
    expect(isLikelySandboxDenied('linuxSeccomp', out(1, 'some error'))).toBe(false);
  });
  test('sandbox_detection_identifies_keyword_in_stderr', () => {
    expect(isLikelySandboxDenied('linuxSeccomp', out(1, 'touch: x: Operation not permitted'))).toBe(true);
  });
  test('sandbox_detection_respects_quick_reject_exit_codes', () => {
    for (const code of [2, 126, 127])
      expect(isLikelySandboxDenied('linuxSeccomp', out(code, 'not found'))).toBe(false);
  });
  test('keywords are checked before the quick-reject codes', () => {
    expect(isLikelySandboxDenied('linuxSeccomp', out(126, 'bash: ./x: Permission denied'))).toBe(true);
  });
  test('sandbox_detection_ignores_non_sandbox_mode', () => {
    expect(isLikelySandboxDenied('none', out(1, 'Permission denied'))).toBe(false);
  });
  test('sandbox_detection_ignores_network_policy_text_in_non_sandbox_mode', () => {
    expect(isLikelySandboxDenied('none', out(1, 'blocked by sandbox network policy'))).toBe(false);
  });
  test('sandbox_detection_uses_aggregated_output', () => {
    expect(isLikelySandboxDenied('macosSeatbelt', out(1, '', '', 'sandbox: deny file-write'))).toBe(true);
  });
  test('sandbox_detection_ignores_network_policy_text_with_zero_exit_code', () => {
    expect(isLikelySandboxDenied('linuxSeccomp', out(0, 'denied by sandbox'))).toBe(false);
  });
  test('sandbox_detection_flags_sigsys_exit_code', () => {
    expect(isLikelySandboxDenied('linuxSeccomp', out(159))).toBe(true);
    expect(isLikelySandboxDenied('macosSeatbelt', out(159))).toBe(false);
  });
  test('every keyword counts, case-insensitively', () => {
    for (const text of ['Read-only file system', 'SECCOMP', 'landlock', 'failed to write file', 'Sandbox']) {
      expect(isLikelySandboxDenied('linuxSeccomp', out(1, text))).toBe(true);
    }
  });
});

// Texts captured from real commands under bubblewrap on Linux.
describe('describeSandboxDenial', () => {
  const write = (stderr: string, target: string) =>
    expect(describeSandboxDenial('linuxSeccomp', out(1, stderr))).toEqual({
      denied: true,
      kind: 'write',
      target,
    });

  test('writes: shells, coreutils, git, Python, Node', () => {
    write('/bin/bash: line 1: /etc/x: Read-only file system', '/etc/x');
    write('bash: /etc/x: Read-only file system', '/etc/x');
    write("touch: cannot touch '/etc/x': Permission denied", '/etc/x');
    write("touch: cannot touch '/root/x': Read-only file system", '/root/x');
    write("rm: cannot remove '/etc/hostname': Read-only file system", '/etc/hostname');
    write("mkdir: cannot create directory '.codex/y': Read-only file system", '.codex/y');
    write("cp: cannot create regular file '/usr/x': Read-only file system", '/usr/x');
    write('sh: 1: cannot create /etc/y: Read-only file system', '/etc/y');
    write('tee: /etc/z: Read-only file system', '/etc/z');
    write("chmod: changing permissions of '/etc/hostname': Read-only file system", '/etc/hostname');
    write('error: could not lock config file .git/config: Read-only file system', '.git/config');
    write("OSError: [Errno 30] Read-only file system: '/etc/x'", '/etc/x');
    write("Error: EROFS: read-only file system, open '/etc/x'", '/etc/x');
    write("Error: EACCES: permission denied, mkdir '/usr/zz'", '/usr/zz');
  });

  test('reads', () => {
    expect(describeSandboxDenial('linuxSeccomp', out(1, 'cat: /root/secret: Permission denied'))).toEqual({
      denied: true,
      kind: 'read',
      target: '/root/secret',
    });
    expect(
      describeSandboxDenial('linuxSeccomp', out(1, "Error: EACCES: permission denied, scandir '/x'")),
    ).toEqual({
      denied: true,
      kind: 'read',
      target: '/x',
    });
  });

  test('a refusal that names no path or kind still says denied', () => {
    expect(
      describeSandboxDenial('linuxSeccomp', out(1, "PermissionError: [Errno 13] Permission denied: '/x'")),
    ).toEqual({
      denied: true,
      target: '/x',
    });
    expect(describeSandboxDenial('linuxSeccomp', out(159))).toEqual({ denied: true });
  });

  test('network failures under a network-off sandbox', () => {
    const net = (stderr: string, exitCode = 1) =>
      describeSandboxDenial('linuxSeccomp', out(exitCode, stderr), { networkDisabled: true });
    expect(
      net(
        '/bin/bash: socket: Operation not permitted\n/bin/bash: line 1: /dev/tcp/127.0.0.1/80: Operation not permitted',
      ),
    ).toEqual({
      denied: true,
      kind: 'network',
      target: '127.0.0.1:80',
    });
    expect(
      net("curl: (7) Failed to connect to 127.0.0.1 port 9 after 0 ms: Couldn't connect to server", 7),
    ).toEqual({
      denied: true,
      kind: 'network',
      target: '127.0.0.1:9',
    });
    expect(net('curl: (6) Could not resolve host: example.com', 6)).toEqual({
      denied: true,
      kind: 'network',
      target: 'example.com',
    });
    expect(net('ConnectionRefusedError: [Errno 111] Connection refused')).toEqual({
      denied: true,
      kind: 'network',
    });
    expect(net('Error: connect ECONNREFUSED 127.0.0.1:8080')).toEqual({
      denied: true,
      kind: 'network',
      target: '127.0.0.1:8080',
    });
    expect(net('Network is unreachable', 2)).toEqual({ denied: false });
  });

  test('network failures are not denials when the network was on, or unsandboxed, or on success', () => {
    const refused = out(7, "curl: (7) Failed to connect to 127.0.0.1 port 9: Couldn't connect to server");
    expect(describeSandboxDenial('linuxSeccomp', refused)).toEqual({ denied: false });
    expect(describeSandboxDenial('none', refused, { networkDisabled: true })).toEqual({ denied: false });
    expect(
      describeSandboxDenial('linuxSeccomp', { ...refused, exitCode: 0 }, { networkDisabled: true }),
    ).toEqual({
      denied: false,
    });
  });

  test('not denied: no keyword', () => {
    expect(describeSandboxDenial('linuxSeccomp', out(1, 'error: something else'))).toEqual({ denied: false });
  });
});

describe('describeSandboxDenial: refusals only the mount layout causes', () => {
  test('EBUSY, EXDEV and a blocked nested user namespace count as denials when sandboxed', () => {
    const busy = out(1, "mv: cannot move '.git' to 'git-away': Device or resource busy\n");
    const exdev = out(
      1,
      "ln: failed to create hard link 'stolen' => '.git/config': Invalid cross-device link\n",
    );
    const userns = out(1, 'unshare: unshare failed: No space left on device\n');
    for (const output of [busy, exdev, userns]) {
      expect(isLikelySandboxDenied('linuxSeccomp', output)).toBe(false); // the original misses them
      expect(describeSandboxDenial('linuxSeccomp', output)).toMatchObject({ denied: true, kind: 'write' });
      expect(describeSandboxDenial('none', output).denied).toBe(false);
    }
    expect(
      describeSandboxDenial('linuxSeccomp', out(1, 'cp: error writing: No space left on device\n')).denied,
    ).toBe(false);
  });
});
