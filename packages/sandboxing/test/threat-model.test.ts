// The threats of running the sandbox as root (this machine runs everything as root), each with
// a test proving it is closed. See README.md, "Threat model".
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnPipe } from '@execd/pty-utils';
import { listenUnixDaemon } from '@execd/test-kit';
import { beforeAll, describe, expect, test } from 'vitest';
import { isLikelySandboxDenied, planFileSystem, resolveSandboxPolicy } from '../src/index.ts';
import { buildBwrapArgs } from '../src/linux/bwrap-args.ts';
import { LAUNCHER_ENV, SECCOMP_FD, withLauncher } from '../src/linux/launcher.ts';
import { seccompFilterPath } from '../src/linux/seccomp-fd.ts';
import { buildSeccompFilter, seccompArchOf } from '../src/linux/seccomp-filter.ts';
import { requireBwrap, runSandboxed, tempDir } from './helpers/index.ts';

let bwrap: string;
beforeAll(() => {
  bwrap = requireBwrap();
});

const unique = () => `execd-${process.pid}-${Math.random().toString(36).slice(2)}`;

/** Runs a Python snippet in the sandbox; the snippet prints what it observed. */
const python = (code: string) => `python3 - <<'PY'\n${code}\nPY`;

describe('capabilities and mounts', () => {
  test('no capabilities remain, and remounting / or a bound path read-write fails', async () => {
    using ws = tempDir();
    mkdirSync(join(ws.path, '.git'));
    const target = `/etc/${unique()}`;
    try {
      const result = await runSandboxed(
        [
          'grep -E "^Cap(Eff|Prm|Bnd):" /proc/self/status',
          'mount -o remount,rw / && echo REMOUNTED-ROOT',
          `mount -o remount,rw,bind ${ws.path}/.git && echo REMOUNTED-GIT`,
          `mount --bind ${ws.path} /etc && echo BOUND`,
          `touch ${target}; echo "[$?]"`,
        ].join('; '),
        { cwd: ws.path },
      );
      expect(result.stdout).toBe(
        'CapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000\n[1]\n',
      );
      expect(existsSync(target)).toBe(false);
    } finally {
      rmSync(target, { force: true });
    }
  });

  test('/proc/sys is read-only and the hostname is private to the sandbox', async () => {
    using ws = tempDir();
    const before = hostname();
    const name = `x${Math.random().toString(36).slice(2, 10)}`;
    try {
      // Writing the host's own current value back: harmless even if the write went through.
      const result = await runSandboxed(
        [
          `echo ${before} > /proc/sys/kernel/hostname; echo "[$?]"`,
          `cat /proc/sys/kernel/core_pattern > /proc/sys/kernel/core_pattern; echo "[$?]"`,
          `hostname ${name}; hostname`,
        ].join('; '),
        { cwd: ws.path },
      );
      expect(result.stdout).toBe(`[1]\n[1]\n${before}\n`);
      expect(result.stderr).toMatch(/Read-only file system/);
      expect(hostname()).toBe(before);
    } finally {
      // Put the host back if the sandbox ever leaks (the assertion above then fails the test).
      if (hostname() !== before) writeFileSync('/proc/sys/kernel/hostname', before);
    }
  });

  test('nested user namespaces cannot be created (--disable-userns)', async () => {
    using ws = tempDir();
    const result = await runSandboxed('unshare -U true && echo NESTED', { cwd: ws.path });
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe('');
  });

  test('without --disable-userns, the seccomp fallback denies user namespaces', async () => {
    using ws = tempDir();
    const script = [
      'unshare -U true && echo NESTED',
      'python3 -c "import ctypes; libc = ctypes.CDLL(None, use_errno=True); print(libc.unshare(0x10000000), ctypes.get_errno())"',
    ].join('; ');
    const run = async (denyUserNamespaces: boolean) => {
      const filter = buildSeccompFilter({
        arch: seccompArchOf()!,
        networkDisabled: true,
        denyUserNamespaces,
      });
      const flags = buildBwrapArgs({
        plan: await planFileSystem(resolveSandboxPolicy({ profile: 'read-only' }, ws.path)),
        networkDisabled: true,
        newSession: true,
        disableUserns: false,
        seccompFd: SECCOMP_FD,
      });
      const argv = withLauncher(seccompFilterPath(filter), [bwrap, ...flags, '/bin/bash', '-c', script]);
      await using child = await spawnPipe({ argv, cwd: ws.path, env: { ...LAUNCHER_ENV } });
      let stdout = '';
      for await (const chunk of child.output())
        if (chunk.stream === 'stdout') stdout += Buffer.from(chunk.bytes);
      return stdout;
    };
    // The control shows the test can tell: with neither defence, nesting works.
    expect(await run(false)).toBe('NESTED\n0 0\n');
    expect(await run(true)).toBe('-1 1\n');
  });
});

describe('host interfaces', () => {
  test('a host Unix socket cannot be connected to with the network off (it can with it on)', async () => {
    using dir = tempDir();
    const path = join(dir.path, 'daemon.sock');
    const daemon = await listenUnixDaemon(path);
    try {
      const code = python(
        `import socket\ns = socket.socket(socket.AF_UNIX)\ntry:\n  s.connect(${JSON.stringify(path)})\n  print("CONNECTED", s.recv(7).decode().strip())\nexcept OSError as e:\n  print("errno", e.errno)`,
      );
      const off = await runSandboxed(code, { cwd: dir.path });
      expect(off.stdout).toBe('errno 1\n');
      expect(daemon.connections).toBe(0);
      const dgram = await runSandboxed(
        python(
          'import socket\ntry:\n  socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\nexcept OSError as e:\n  print("errno", e.errno)',
        ),
        { cwd: dir.path },
      );
      expect(dgram.stdout).toBe('errno 1\n');
      const on = await runSandboxed(code, {
        cwd: dir.path,
        context: { profile: 'workspace-write', network: 'full' },
      });
      expect(on.stdout).toBe('CONNECTED secret\n');
      expect(daemon.connections).toBe(1);
    } finally {
      await daemon.close();
    }
  });

  test('SysV IPC is private to the sandbox', async () => {
    using ws = tempDir();
    const id = execFileSync('ipcmk', ['-Q'], { encoding: 'utf8' }).match(/(\d+)/)?.[1];
    expect(id).toBeDefined();
    try {
      expect(execFileSync('ipcs', ['-q'], { encoding: 'utf8' })).toContain(` ${id} `);
      const result = await runSandboxed('ipcs -q', { cwd: ws.path });
      expect(result.exitCode).toBe(0);
      expect(result.stdout).not.toContain(` ${id} `);
    } finally {
      execFileSync('ipcrm', ['-q', id!]);
    }
  });

  test('the kernel keyring, ptrace, process_vm_readv and io_uring are denied', async () => {
    using ws = tempDir();
    const nr =
      seccompArchOf() === 'aarch64'
        ? { keyctl: 219, add_key: 217, request_key: 218, pvr: 270, uring: 425 }
        : { keyctl: 250, add_key: 248, request_key: 249, pvr: 310, uring: 425 };
    const code = [
      'import ctypes, os',
      'libc = ctypes.CDLL(None, use_errno=True)',
      'def call(*args):',
      '  ctypes.set_errno(0)',
      '  r = libc.syscall(*args)',
      '  return f"{r}/{ctypes.get_errno()}"',
      `print("keyctl", call(${nr.keyctl}, 0, -3, 0))`, // KEYCTL_GET_KEYRING_ID(@s)
      `print("add_key", call(${nr.add_key}, b"user", b"x", b"v", 1, -3))`,
      `print("request_key", call(${nr.request_key}, b"user", b"x", None, 0))`,
      `print("ptrace_traceme", call(101 if ${nr.keyctl} == 250 else 117, 0, 0, 0, 0))`,
      `print("ptrace_attach_host", call(101 if ${nr.keyctl} == 250 else 117, 16, ${process.pid}, 0, 0))`,
      `print("process_vm_readv", call(${nr.pvr}, ${process.pid}, 0, 0, 0, 0, 0))`,
      `print("io_uring_setup", call(${nr.uring}, 1, 0))`,
    ].join('\n');
    // Control, unsandboxed: the keyring answers (a keyring id), so the -1/EPERM below is the filter.
    const host = await runSandboxed(python(code.split('\n').slice(0, 7).join('\n')), {
      cwd: ws.path,
      context: { profile: 'danger-full-access', mode: 'forbid' },
    });
    expect(host.sandboxType).toBe('none');
    expect(host.stdout).toMatch(/^keyctl \d+\/0\n$/);
    const result = await runSandboxed(python(code), { cwd: ws.path });
    expect(result.stdout).toBe(
      [
        'keyctl -1/1',
        'add_key -1/1',
        'request_key -1/1',
        'ptrace_traceme -1/1',
        'ptrace_attach_host -1/1',
        'process_vm_readv -1/1',
        'io_uring_setup -1/1',
        '',
      ].join('\n'),
    );
  });

  test('host processes are not visible', async () => {
    using ws = tempDir();
    const result = await runSandboxed('ls /proc | grep -c "^[0-9]"', { cwd: ws.path });
    expect(Number(result.stdout.trim())).toBeLessThan(10);
  });
});

describe('protected paths in a writable root', () => {
  function repo(path: string): void {
    mkdirSync(join(path, '.git', 'hooks'), { recursive: true });
    writeFileSync(join(path, '.git', 'config'), '[core]\n');
    mkdirSync(join(path, '.agents'));
    writeFileSync(join(path, '.agents', 'AGENTS.md'), 'trusted\n');
  }

  const attempts: readonly (readonly [string, string])[] = [
    ['write .git/config', 'echo "[core] fsmonitor = x" >> .git/config'],
    ['create a hook', 'echo x > .git/hooks/pre-commit'],
    ['move .git away', 'mv .git moved'],
    ['move a directory over .git', 'mkdir -p other && mv -T other .git'],
    [
      'rename over .git (Python)',
      python('import os\nos.makedirs("d", exist_ok=True)\nos.rename("d", ".git")'),
    ],
    ['remove .git', 'rm -rf .git'],
    ['hard-link .git/config out', 'ln .git/config stolen'],
    ['replace .git/config via rename', 'echo x > c && mv -f c .git/config'],
    ['write .agents', 'echo x >> .agents/AGENTS.md'],
    ['move .agents away', 'mv .agents moved'],
    ['create .codex', 'mkdir -p .codex/skills'],
    ['create .codex/config.toml', 'echo x > .codex/config.toml'],
    ['remove .codex', 'rmdir .codex'],
    ['move .codex away', 'mv .codex moved'],
    ['replace .codex with a symlink', 'ln -sfn /tmp .codex'],
  ];

  test.each(attempts)('%s fails', async (_name, script) => {
    using ws = tempDir();
    repo(ws.path);
    const result = await runSandboxed(script, { cwd: ws.path });
    expect(result.exitCode).not.toBe(0);
    expect(readFileSync(join(ws.path, '.git', 'config'), 'utf8')).toBe('[core]\n');
    expect(readFileSync(join(ws.path, '.agents', 'AGENTS.md'), 'utf8')).toBe('trusted\n');
    expect(existsSync(join(ws.path, '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect(existsSync(join(ws.path, 'moved'))).toBe(false);
    expect(existsSync(join(ws.path, 'stolen'))).toBe(false);
    expect(existsSync(join(ws.path, '.codex', 'skills'))).toBe(false);
    expect(existsSync(join(ws.path, '.codex', 'config.toml'))).toBe(false);
  });

  test('a missing .agents cannot be created in the workspace', async () => {
    using ws = tempDir();
    const result = await runSandboxed('mkdir -p .agents/skills', { cwd: ws.path });
    expect(result.exitCode).toBe(1);
    expect(isLikelySandboxDenied(result.sandboxType, result)).toBe(true);
    expect(existsSync(join(ws.path, '.agents', 'skills'))).toBe(false);
  });

  test('a gitdir pointer protects the git directory it names (worktree or submodule)', async () => {
    using ws = tempDir();
    using store = tempDir('execd-gitdir-', tmpdir());
    mkdirSync(join(store.path, 'modules', 'sub'), { recursive: true });
    writeFileSync(join(store.path, 'modules', 'sub', 'config'), '[core]\n');
    writeFileSync(join(ws.path, '.git'), `gitdir: ${join(store.path, 'modules', 'sub')}\n`);
    // The store is under /tmp, itself a writable root: only the carve-out keeps it read-only.
    const result = await runSandboxed(
      `echo x >> ${join(store.path, 'modules', 'sub', 'config')}; echo "[$?]"; echo y > .git; echo "[$?]"; rm -f .git; echo "[$?]"`,
      { cwd: ws.path },
    );
    expect(result.stdout).toBe('[1]\n[1]\n[1]\n');
    expect(readFileSync(join(store.path, 'modules', 'sub', 'config'), 'utf8')).toBe('[core]\n');
  });
  test('a repository the host makes between two commands is protected in the second (listings cached)', async () => {
    using ws = tempDir();
    mkdirSync(join(ws.path, 'vendor', 'lib'), { recursive: true });
    // Old enough to be cached by the first command's scan.
    await new Promise((resolve) => setTimeout(resolve, 2_200));
    expect((await runSandboxed('true', { cwd: ws.path })).exitCode).toBe(0);
    // The host clones a repository into the cached folder and puts its times back as they were.
    const lib = join(ws.path, 'vendor', 'lib');
    const reference = join(ws.path, 'times');
    writeFileSync(reference, '');
    execFileSync('touch', ['-r', lib, reference]);
    mkdirSync(join(lib, '.git', 'hooks'), { recursive: true });
    execFileSync('touch', ['-r', reference, lib]);
    const result = await runSandboxed(
      'echo "#!/bin/sh" > vendor/lib/.git/hooks/pre-commit; echo "[$?]"; mkdir vendor/lib/.git/x; echo "[$?]"',
      { cwd: ws.path },
    );
    expect(result.stdout).toBe('[1]\n[1]\n');
    expect(existsSync(join(lib, '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect(existsSync(join(lib, '.git', 'x'))).toBe(false);
  });
});
