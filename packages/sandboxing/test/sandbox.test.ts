import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExecError } from '@execd/protocol';
import { waitFor } from '@execd/test-kit';
import { beforeAll, describe, expect, test } from 'vitest';
import {
  describeSandboxDenial,
  isLikelySandboxDenied,
  probeBwrap,
  sandboxFromContext,
  spawnProcess,
} from '../src/index.ts';
import {
  childEnv,
  requireBwrap,
  runSandboxed,
  sleepMarker,
  sleepPids,
  startSandboxed,
  tempDir,
} from './helpers/index.ts';

beforeAll(() => {
  requireBwrap();
});

const unique = () => `execd-${process.pid}-${Math.random().toString(36).slice(2)}`;

describe('workspace-write under bubblewrap', () => {
  test('the cwd and /tmp are writable', async () => {
    using ws = tempDir();
    const inTmp = join(tmpdir(), unique());
    try {
      const result = await runSandboxed(`echo a > f && echo b > ${inTmp} && cat f ${inTmp}`, {
        cwd: ws.path,
      });
      expect(result).toMatchObject({ exitCode: 0, stdout: 'a\nb\n', sandboxType: 'linuxSeccomp' });
      expect(readFileSync(join(ws.path, 'f'), 'utf8')).toBe('a\n');
    } finally {
      rmSync(inTmp, { force: true });
    }
  });

  test.each([
    ['/etc', () => '/etc'],
    ['$HOME', () => homedir()],
    ['/var/tmp (not a root)', () => '/var/tmp'],
  ])('writing %s fails and is detected as a denial', async (_name, dir) => {
    using ws = tempDir();
    const target = join(dir(), unique());
    try {
      const result = await runSandboxed(`touch '${target}'`, { cwd: ws.path });
      expect(result.exitCode).not.toBe(0);
      expect(existsSync(target)).toBe(false);
      expect(isLikelySandboxDenied(result.sandboxType, result)).toBe(true);
      expect(describeSandboxDenial(result.sandboxType, result)).toEqual({
        denied: true,
        kind: 'write',
        target,
      });
    } finally {
      rmSync(target, { force: true });
    }
  });

  test('with excludeSlashTmp, /tmp outside the workspace is read-only', async () => {
    using ws = tempDir();
    using sibling = tempDir();
    const result = await runSandboxed(`echo x > ${sibling.path}/f`, {
      cwd: ws.path,
      context: { profile: 'workspace-write', excludeSlashTmp: true },
    });
    expect(result.exitCode).toBe(1);
    expect(existsSync(join(sibling.path, 'f'))).toBe(false);
    expect(describeSandboxDenial(result.sandboxType, result)).toMatchObject({ denied: true, kind: 'write' });
  });

  test('read-only: the cwd is not writable either', async () => {
    using ws = tempDir();
    const result = await runSandboxed('echo x > f', { cwd: ws.path, context: { profile: 'read-only' } });
    expect(result.exitCode).toBe(1);
    expect(existsSync(join(ws.path, 'f'))).toBe(false);
  });

  test('writing .git/config and creating .codex in the workspace fail', async () => {
    using ws = tempDir();
    mkdirSync(join(ws.path, '.git'));
    writeFileSync(join(ws.path, '.git', 'config'), '[core]\n');
    const git = await runSandboxed('echo "[core] fsmonitor = evil" >> .git/config', { cwd: ws.path });
    expect(git.exitCode).toBe(1);
    expect(describeSandboxDenial(git.sandboxType, git)).toEqual({
      denied: true,
      kind: 'write',
      target: '.git/config',
    });
    expect(readFileSync(join(ws.path, '.git', 'config'), 'utf8')).toBe('[core]\n');

    const codex = await runSandboxed('mkdir -p .codex/skills || echo x > .codex/config.toml', {
      cwd: ws.path,
    });
    expect(codex.exitCode).not.toBe(0);
    expect(isLikelySandboxDenied(codex.sandboxType, codex)).toBe(true);
    expect(existsSync(join(ws.path, '.codex', 'config.toml'))).toBe(false);
    expect(existsSync(join(ws.path, '.codex', 'skills'))).toBe(false);
  });

  test('the network hint is set only when the network is off', async () => {
    using ws = tempDir();
    const off = await runSandboxed('echo "[$CODEX_SANDBOX_NETWORK_DISABLED]"', { cwd: ws.path });
    expect(off.stdout).toBe('[1]\n');
    const on = await runSandboxed('echo "[$CODEX_SANDBOX_NETWORK_DISABLED]"', {
      cwd: ws.path,
      context: { profile: 'workspace-write', network: 'full' },
    });
    expect(on.stdout).toBe('[]\n');
  });

  test('shell-startup variables reach the command (set by bubblewrap, not seen by the launcher)', async () => {
    using ws = tempDir();
    writeFileSync(join(ws.path, 'env.sh'), 'echo sourced\n');
    const result = await runSandboxed('echo "$SHELLOPTS" | grep -o noclobber; echo "$ENV"', {
      cwd: ws.path,
      env: childEnv({ BASH_ENV: join(ws.path, 'env.sh'), SHELLOPTS: 'noclobber', ENV: '/env' }),
    });
    expect(result).toMatchObject({ exitCode: 0, stdout: 'sourced\nnoclobber\n/env\n' });
  });

  test('bash, coreutils, git, python (asyncio) and node (child stdin pipes) still work with the network off', async () => {
    using ws = tempDir();
    const script = [
      'set -e',
      'printf "b\\na\\n" | sort | head -1',
      'git init -q repo && git -C repo status --short && echo git-ok',
      'python3 -c "import asyncio, socket; asyncio.run(asyncio.sleep(0)); a, b = socket.socketpair(); a.send(b\'y\'); print(b.recv(1).decode())"',
      `node -e "const c = require('child_process').spawn('cat'); c.stdout.on('data', (d) => process.stdout.write(d)); c.stdin.end('node-ok\\n')"`,
    ].join('\n');
    const result = await runSandboxed(script, { cwd: ws.path });
    expect(result.stderr).toBe('');
    expect(result).toMatchObject({ exitCode: 0, stdout: 'a\ngit-ok\ny\nnode-ok\n' });
  });
});

describe('network', () => {
  async function listen(): Promise<
    { server: Server; port: number; connections: () => number } & AsyncDisposable
  > {
    let count = 0;
    const server = createServer((socket) => {
      count++;
      socket.end('hello\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no TCP address');
    return {
      server,
      port: address.port,
      connections: () => count,
      [Symbol.asyncDispose]: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  }

  const connect = (port: number) =>
    `python3 -c "import socket; s = socket.create_connection(('127.0.0.1', ${port}), timeout=10); print(s.recv(6).decode(), end='')"`;

  test('a TCP connection to 127.0.0.1 fails with the network off and is a network denial', async () => {
    await using tcp = await listen();
    using ws = tempDir();
    const result = await runSandboxed(`exec 3<>/dev/tcp/127.0.0.1/${tcp.port}`, { cwd: ws.path });
    expect(result.exitCode).toBe(1);
    expect(describeSandboxDenial(result.sandboxType, result, { networkDisabled: true })).toEqual({
      denied: true,
      kind: 'network',
      target: `127.0.0.1:${tcp.port}`,
    });
    const python = await runSandboxed(connect(tcp.port), { cwd: ws.path });
    expect(python.exitCode).toBe(1);
    expect(tcp.connections()).toBe(0);
  });

  test('the same connection works with the network on', async () => {
    await using tcp = await listen();
    using ws = tempDir();
    const result = await runSandboxed(connect(tcp.port), {
      cwd: ws.path,
      context: { profile: 'workspace-write', networkAccess: true },
    });
    expect(result).toMatchObject({ exitCode: 0, stdout: 'hello\n' });
    expect(tcp.connections()).toBe(1);
  });
});

describe('PTY', () => {
  test('an interactive bash in a PTY under bubblewrap has job control', async () => {
    using ws = tempDir();
    const { process: shell, sandboxType } = await startSandboxed(
      ['/bin/bash', '--norc', '--noprofile', '-i'],
      {
        cwd: ws.path,
        tty: true,
        env: childEnv({ PS1: '$ ', TERM: 'dumb' }),
      },
    );
    await using _ = shell;
    expect(sandboxType).toBe('linuxSeccomp');
    let screen = '';
    const decoder = new TextDecoder();
    const reading = (async () => {
      for await (const chunk of shell.output()) screen += decoder.decode(chunk.bytes, { stream: true });
    })();
    const marker = sleepMarker();
    await shell.write(`set -o | grep monitor; sleep ${marker} &\n`);
    await waitFor(() => /monitor\s+on/.test(screen) && /\[1\] \d+/.test(screen), {
      what: 'monitor mode and a job',
    });
    await shell.write('jobs\n');
    await waitFor(
      () => new RegExp(`\\[1\\]\\+\\s+Running\\s+sleep ${marker.replace('.', '\\.')}`).test(screen),
      { what: 'jobs' },
    );
    await shell.write('fg\n');
    await waitFor(() => screen.includes(`sleep ${marker}\r\n`), { what: 'fg to echo the job' });
    await shell.write('\x1a');
    await waitFor(() => /\[1\]\+\s+Stopped/.test(screen), { what: 'Ctrl-Z to stop the job' });
    await shell.terminate({ graceMs: 2000 });
    await reading;
    await waitFor(() => sleepPids(marker).length === 0, { what: 'the stopped job to be gone' });
  });
});

describe('lifetime', () => {
  test.each([false, true])('terminate reaps a sandboxed tree (tty: %s)', async (tty) => {
    using ws = tempDir();
    const marker = sleepMarker();
    const script = `sleep ${marker} & setsid sleep ${marker} & nohup sleep ${marker} >/dev/null 2>&1 & echo started; wait`;
    const { process: child } = await startSandboxed(['/bin/bash', '-c', script], { cwd: ws.path, tty });
    await using _ = child;
    await waitFor(() => sleepPids(marker).length === 3, { what: 'three sleeps' });
    await child.terminate({ graceMs: 2000 });
    await waitFor(() => sleepPids(marker).length === 0, { what: 'every sleep to be gone' });
  });

  test('a setsid/nohup background process does not outlive its command', async () => {
    using ws = tempDir();
    const marker = sleepMarker();
    const script = `setsid sleep ${marker} & nohup sleep ${marker} >/dev/null 2>&1 & disown -a; read -r line; echo "$line"`;
    const { process: child } = await startSandboxed(['/bin/bash', '-c', script], {
      cwd: ws.path,
      stdinOpen: true,
    });
    await using _ = child;
    await waitFor(() => sleepPids(marker).length === 2, { what: 'both background sleeps to run' });
    await child.write('bye\n');
    expect((await child.closed).exitCode).toBe(0);
    await waitFor(() => sleepPids(marker).length === 0, {
      what: 'the background sleeps to die with the command',
    });
  });
});

describe('bubblewrap discovery', () => {
  test('without bwrap the spawn fails with a clear unsupported error', async () => {
    using ws = tempDir();
    const error = await startSandboxed(['/bin/true'], {
      cwd: ws.path,
      bwrapSearchPath: join(ws.path, 'nothing'),
    }).catch((caught: unknown) => caught);
    expect(ExecError.is(error) && error.code).toBe('unsupported');
    expect((error as Error).message).toMatch(/bubblewrap/);
  });

  test('a fake bwrap inside the workspace is ignored', async () => {
    using ws = tempDir();
    const fake = join(ws.path, 'bin', 'bwrap');
    mkdirSync(join(ws.path, 'bin'));
    writeFileSync(fake, `#!/bin/sh\ntouch ${ws.path}/fake-ran\nexit 0\n`);
    chmodSync(fake, 0o755);
    const result = await runSandboxed('echo inside', {
      cwd: ws.path,
      bwrapSearchPath: `${join(ws.path, 'bin')}:${process.env.PATH}`,
    });
    expect(result).toMatchObject({ exitCode: 0, stdout: 'inside\n', sandboxType: 'linuxSeccomp' });
    expect(existsSync(join(ws.path, 'fake-ran'))).toBe(false);
  });

  test('a missing program is spawnFailed, as unsandboxed', async () => {
    using ws = tempDir();
    const error = await startSandboxed(['no-such-program-execd'], { cwd: ws.path }).catch(
      (caught: unknown) => caught,
    );
    expect(ExecError.is(error) && error.code).toBe('spawnFailed');
  });

  test('an arg0 override this bubblewrap cannot apply is unsupported, not silently dropped', async () => {
    using ws = tempDir();
    const caps = await probeBwrap(requireBwrap());
    const request = {
      command: ['/bin/sh', '-c', 'echo "$0"'],
      arg0: 'renamed',
      cwd: ws.path,
      env: childEnv(),
      sandbox: sandboxFromContext({ profile: 'workspace-write' }, ws.path),
      tty: false,
      stdinOpen: false,
    };
    if (caps.argv0) {
      const { process: child } = await spawnProcess(request);
      await using _ = child;
      let stdout = '';
      for await (const chunk of child.output()) stdout += Buffer.from(chunk.bytes).toString();
      expect(stdout).toBe('renamed\n');
    } else {
      const error = await spawnProcess(request).catch((caught: unknown) => caught);
      expect(ExecError.is(error) && error.code).toBe('unsupported');
    }
  });

  test('an unsandboxed spawn goes straight to pty-utils', async () => {
    using ws = tempDir();
    const { process: child, sandboxType } = await spawnProcess({
      command: ['/bin/sh', '-c', 'echo plain'],
      cwd: ws.path,
      env: childEnv(),
      tty: false,
      stdinOpen: false,
    });
    await using _ = child;
    expect(sandboxType).toBe('none');
    expect((await child.closed).exitCode).toBe(0);
  });
});

describe('no litter', () => {
  test('the placeholders for a missing .git, .codex and .agents are gone once the last sandbox using them ends', async () => {
    using ws = tempDir();
    const first = await startSandboxed(['sh', '-c', 'read line; echo "$line"'], {
      cwd: ws.path,
      stdinOpen: true,
    });
    // While it runs, the names are masked (mount points exist on the host) and cannot be created.
    const second = await runSandboxed('for d in .git .codex .agents; do mkdir $d/x || echo "no $d"; done', {
      cwd: ws.path,
    });
    expect(second.stdout).toBe('no .git\nno .codex\nno .agents\n');
    expect(readdirSync(ws.path).sort()).toEqual(['.agents', '.codex', '.git']);
    for (const name of ['.agents', '.codex', '.git']) expect(readdirSync(join(ws.path, name))).toEqual([]);
    // Listed in the result, for a watchdog that must remove them should this process die first.
    const made = ['.git', '.agents', '.codex'].map((name) => join(realpathSync(ws.path), name));
    expect(first.placeholders).toEqual(expect.arrayContaining(made));
    // The first sandbox still uses them: a third launch now must not treat them as existing folders.
    await first.process.write(Buffer.from('bye\n'));
    await first.process.closed;
    await waitFor(() => readdirSync(ws.path).length === 0, { what: 'the placeholders to be removed' });
  });
  test('sandboxes starting while another one ends never find a placeholder half-removed', async () => {
    // Overlapping short sandboxes in one workspace (under /tmp, itself a writable root): each
    // start may land while another sandbox's placeholder is being made or removed. It must still
    // mask the names and hold them (a folder bound as a user's, and detached by the owner's
    // removal, let a command create .codex/x on the host) and start (never bind a folder about
    // to vanish: bubblewrap fails to mount it).
    using ws = tempDir();
    const failures: string[] = [];
    const worker = async (): Promise<void> => {
      for (let round = 0; round < 15; round++) {
        const result = await runSandboxed('mkdir .codex/x 2>/dev/null && echo CREATED || echo masked', {
          cwd: ws.path,
        });
        if (result.exitCode !== 0 || result.stdout !== 'masked\n')
          failures.push(`${result.exitCode}: ${result.stdout}${result.stderr}`);
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    expect(failures).toEqual([]);
    // Checked from the host: nothing was created through a placeholder another sandbox held.
    expect(existsSync(join(ws.path, '.codex', 'x'))).toBe(false);
    await waitFor(() => readdirSync(ws.path).length === 0, { what: 'the placeholders to be removed' });
  });
});
