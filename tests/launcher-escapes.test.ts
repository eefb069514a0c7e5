// Escapes through execd's own launcher and protection logic (security issue 12), each performed
// for real through a real `execd-server` child, as a model choosing a command and its arguments
// would, and checked on the host from outside the sandbox.

import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  closeSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExecServerClient } from '@execd/exec-client';
import type { SandboxContext } from '@execd/protocol';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { CliServer } from './helpers/cli-server.ts';
import { childEnv, collect, execParams } from './helpers/exec.ts';

const WORKSPACE_WRITE: SandboxContext = { profile: 'workspace-write', network: 'off' };
const cleanups: (() => Promise<unknown> | unknown)[] = [];
let base: string;
let ws: string;
/** Outside every writable root (the sandbox may read it, never write it). */
let outside: string;

beforeAll(() => {
  // Not under /tmp: /tmp is a writable root of every workspace-write sandbox.
  base = realpathSync(mkdtempSync(join(process.env.HOME ?? '/root', '.execd-launcher-escapes-')));
  ws = join(base, 'ws');
  outside = join(base, 'outside');
  mkdirSync(ws);
  mkdirSync(outside);
});
afterAll(() => rmSync(base, { recursive: true, force: true }));
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function serverAndClient(
  options: Parameters<typeof CliServer.start>[0] & { token?: string } = {},
): Promise<{ server: CliServer; client: ExecServerClient }> {
  const server = await CliServer.start(options);
  cleanups.push(() => server.kill('SIGKILL'));
  const client = await ExecServerClient.connect({ url: server.url, codec: 'msgpack', token: options.token });
  cleanups.push(() => client.close());
  return { server, client };
}

async function run(
  client: ExecServerClient,
  script: string,
  options: { cwd?: string; env?: Record<string, string>; sandbox?: SandboxContext | null } = {},
) {
  const started = await client.start(
    execParams({
      processId: randomUUID(),
      argv: ['/bin/bash', '-c', script],
      cwd: options.cwd ?? ws,
      env: options.env ?? childEnv(),
      ...(options.sandbox === null ? {} : { sandbox: options.sandbox ?? WORKSPACE_WRITE }),
    }),
  );
  const result = await collect(started);
  return { ...result, out: result.stdout.toString(), err: result.stderr.toString() };
}

describe('the launcher runs outside the sandbox with nothing the command chose', () => {
  test('loader variables (LD_DEBUG_OUTPUT, LD_PRELOAD) act only inside the sandbox', async () => {
    const { client } = await serverAndClient();
    const traces = join(outside, 'ld-trace');
    mkdirSync(traces);
    const env = childEnv({ LD_DEBUG: 'files', LD_DEBUG_OUTPUT: join(traces, 'trace'), LD_PRELOAD: '' });
    // Control: unsandboxed, the dynamic loader of the command itself writes the trace on the host.
    const control = await run(client, 'true', { env, sandbox: null });
    expect(control.exitCode).toBe(0);
    expect(readdirSync(traces).length).toBeGreaterThan(0);
    rmSync(traces, { recursive: true });
    mkdirSync(traces);
    // Sandboxed: the variables reach the command (its loader cannot write the read-only folder),
    // but neither the launcher nor bubblewrap, which run on the host as root, ever see them.
    const sandboxed = await run(client, 'printf "%s" "$LD_DEBUG_OUTPUT"', { env });
    expect(sandboxed.exitCode).toBe(0);
    expect(sandboxed.out).toContain(join(traces, 'trace'));
    expect(readdirSync(traces)).toEqual([]);
  });

  test('a file descriptor the server inherited without close-on-exec reaches no command', async () => {
    const target = join(outside, 'inherited.txt');
    writeFileSync(target, '');
    const fd = openSync(target, 'w');
    try {
      const { server, client } = await serverAndClient({
        args: ['--log-level', 'debug'],
        inheritFds: { 100: fd },
      });
      // Control: the server did inherit it, and closed it at start-up (Node keeps fds it did not
      // open; the sandbox launcher closes them again, tested in the sandboxing package).
      expect(server.logRecords()).toContainEqual(
        expect.objectContaining({ msg: 'closed inherited descriptors', fds: expect.arrayContaining([100]) }),
      );
      for (const options of [{ sandbox: null }, {}]) {
        const attack = await run(
          client,
          'if printf PWNED >&100; then echo WROTE; fi; ls /proc/self/fd',
          options,
        );
        expect(attack.out).not.toContain('WROTE');
        expect(attack.err).toMatch(/Bad file descriptor/);
        expect(attack.out.split('\n')).not.toContain('100');
      }
      expect(readFileSync(target, 'utf8')).toBe('');
    } finally {
      closeSync(fd);
    }
  });

  test("another session's terminal is out of reach, sandboxed or not", async () => {
    const { client } = await serverAndClient();
    // The victim: an interactive session whose terminal master the server holds (node-pty's
    // masters are not close-on-exec).
    const victim = await client.start(
      execParams({ processId: randomUUID(), argv: ['/bin/cat'], cwd: ws, tty: true }),
    );
    cleanups.push(() => victim.terminate().catch(() => undefined));
    await victim.write(Buffer.from('ready\n'));
    // The attack: write into every terminal device among the command's own descriptors.
    const attack = [
      'for f in /proc/$$/fd/*; do',
      `  n=\${f##*/}`,
      '  if [ "$n" -gt 2 ] && [ -c "$f" ]; then printf "INJECTED\\n" >&"$n" && echo "WROTE $n"; fi',
      'done; true',
    ].join('\n');
    for (const options of [{ sandbox: null }, {}]) {
      const result = await run(client, attack, options);
      expect(result.exitCode).toBe(0);
      expect(result.out).not.toContain('WROTE');
    }
    // Checked from outside: the victim's terminal shows only what its own client typed.
    await victim.write(Buffer.from('done\n\x04'));
    const seen = (await collect(victim)).pty.toString();
    expect(seen).toContain('done');
    expect(seen).not.toContain('INJECTED');
  });
});

describe('no set-id file can be minted', () => {
  test('chmod, install, open(O_CREAT) and mknod with set-uid/set-gid bits all fail; plain modes work', async () => {
    const { client } = await serverAndClient();
    const dir = join(ws, 'setid');
    mkdirSync(dir);
    const script = [
      'cp /bin/bash x; chmod 4755 x; chmod u+s x; chmod g+s x',
      'install -m 4755 /bin/true y',
      `perl -MFcntl -e 'sysopen(F, "z", O_CREAT|O_WRONLY, 06755) or die "$!"'`,
      'mknod w p; mknod -m 4755 v p',
      'python3 -c "import os; os.chmod(\'x\', 0o6755)"',
      'cp /bin/true plain && chmod 755 plain && echo PLAIN-OK',
    ].join('; ');
    const result = await run(client, script, { cwd: dir });
    expect(result.out).toContain('PLAIN-OK');
    for (const name of readdirSync(dir)) {
      const { mode } = lstatSync(join(dir, name));
      expect({ name, setid: (mode & 0o6000) !== 0 }).toEqual({ name, setid: false });
    }
    expect(statSync(join(dir, 'plain')).mode & 0o777).toBe(0o755);
  });

  test('kernel attack surface: userfaultfd, perf_event_open and bpf are denied', async () => {
    const { client } = await serverAndClient();
    const nr =
      process.arch === 'arm64'
        ? { userfaultfd: 282, perf: 241, bpf: 280 }
        : { userfaultfd: 323, perf: 298, bpf: 321 };
    const script = `perl -e 'use Errno; for my $n (${nr.userfaultfd}, ${nr.perf}, ${nr.bpf}) { my $r = syscall($n, 0, 0, 0, 0, 0); print "$n:$r:", ($!{EPERM} ? "EPERM" : "other"), "\\n" }'`;
    const result = await run(client, script);
    expect(result.out.trim().split('\n')).toEqual([
      `${nr.userfaultfd}:-1:EPERM`,
      `${nr.perf}:-1:EPERM`,
      `${nr.bpf}:-1:EPERM`,
    ]);
  });
});

describe('workspace files cannot stall or steer the server', () => {
  test('a FIFO as .git (or as a commondir behind a gitdir file) does not block the server', async () => {
    const { server, client } = await serverAndClient();
    const fifoWs = join(base, 'fifo-ws');
    mkdirSync(join(fifoWs, 'wt', 'gitdir'), { recursive: true });
    execFileSync('mkfifo', [join(fifoWs, '.git')]);
    writeFileSync(join(fifoWs, 'wt', '.git'), 'gitdir: gitdir\n');
    execFileSync('mkfifo', [join(fifoWs, 'wt', 'gitdir', 'commondir')]);
    for (const cwd of [fifoWs, join(fifoWs, 'wt')]) {
      const result = await run(client, 'echo ran; echo x > .git', { cwd });
      expect(result.out).toBe('ran\n');
      expect(result.exitCode).not.toBe(0);
    }
    const ready = await fetch(`${server.httpUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(lstatSync(join(fifoWs, '.git')).isFIFO()).toBe(true);
  });

  test('a root swapped for a symlink after first use is refused, and the target stays untouched', async () => {
    const { client } = await serverAndClient();
    const jobs = join(base, 'jobs');
    const repo = join(jobs, 'job-1', 'repo');
    const victim = join(base, 'victim');
    mkdirSync(repo, { recursive: true });
    mkdirSync(victim);
    // The parent of the workspace is itself writable (as $TMPDIR is): a command can rearrange it.
    const sandbox: SandboxContext = {
      profile: 'workspace-write',
      network: 'off',
      writableRoots: [`file://${jobs}`],
    };
    const first = await run(
      client,
      `mv ${jobs}/job-1 ${jobs}/job-1.old && mkdir ${jobs}/job-1 && ln -s ${victim} ${repo} && echo swapped`,
      { cwd: repo, sandbox },
    );
    expect(first.out).toBe('swapped\n');
    const second = await run(client, 'echo pwned > pwned.txt', {
      cwd: join(jobs, 'job-1.old', 'repo'),
      sandbox: { ...sandbox, workspaceRoots: [`file://${repo}`] },
    }).catch((error: unknown) => error);
    expect(second).toMatchObject({ code: 'invalidParams' });
    expect(readdirSync(victim)).toEqual([]);
  });
});

describe('git metadata a host git would use stays read-only', () => {
  test('nested repositories, submodule pointers, a missing .git, and other workspaces under /tmp', async () => {
    const { client } = await serverAndClient();
    const repoWs = join(base, 'git-ws');
    execFileSync('git', ['init', '-q', repoWs]);
    execFileSync('git', ['init', '-q', join(repoWs, 'vendor', 'lib')]);
    mkdirSync(join(repoWs, '.git', 'modules', 'sm'), { recursive: true });
    mkdirSync(join(repoWs, 'deps', 'sm'), { recursive: true });
    writeFileSync(join(repoWs, 'deps', 'sm', '.git'), 'gitdir: ../../.git/modules/sm\n');
    const subWs = join(repoWs, 'packages', 'app');
    mkdirSync(subWs, { recursive: true });
    const otherTmpRepo = realpathSync(mkdtempSync(join(tmpdir(), 'execd-other-ws-')));
    cleanups.push(() => rmSync(otherTmpRepo, { recursive: true, force: true }));
    execFileSync('git', ['init', '-q', otherTmpRepo]);
    const before = (path: string) => readFileSync(path, 'utf8');
    const nestedConfig = before(join(repoWs, 'vendor', 'lib', '.git', 'config'));
    const tmpConfig = before(join(otherTmpRepo, '.git', 'config'));

    const attack = [
      "printf '[core]\\n\\tfsmonitor = touch /pwned\\n' >> vendor/lib/.git/config",
      'echo "gitdir: /tmp/evil" > deps/sm/.git',
      `printf '[core]\\n\\tfsmonitor = touch /pwned\\n' >> ${otherTmpRepo}/.git/config`,
      'echo done',
    ].join('; ');
    const result = await run(client, attack, { cwd: repoWs });
    expect(result.out).toBe('done\n');
    expect(before(join(repoWs, 'vendor', 'lib', '.git', 'config'))).toBe(nestedConfig);
    expect(before(join(repoWs, 'deps', 'sm', '.git'))).toBe('gitdir: ../../.git/modules/sm\n');
    expect(before(join(otherTmpRepo, '.git', 'config'))).toBe(tmpConfig);

    // A sub-folder workspace of a repository: a .git planted there would be found first by git.
    const planted = await run(
      client,
      'git init -q . ; mkdir -p .git/hooks; echo "[core] fsmonitor = x" > .git/config; echo done',
      {
        cwd: subWs,
      },
    );
    expect(planted.out).toBe('done\n');
    const gitThere = join(subWs, '.git');
    // Only the empty read-only placeholder (a mount point) can be there; git skips it.
    expect(existsSync(gitThere) ? readdirSync(gitThere) : []).toEqual([]);
    const top = execFileSync('git', ['rev-parse', '--show-toplevel'], { cwd: subWs, encoding: 'utf8' });
    expect(top.trim()).toBe(repoWs);
  });
});

describe('repositories a command plants are found by the next launch', () => {
  test('a .git made in a folder the scan had listed, beside thousands of files, is read-only next time', async () => {
    const { client } = await serverAndClient();
    const tree = join(base, 'planted-ws');
    mkdirSync(join(tree, 'deep', 'a', 'b'), { recursive: true });
    // A first launch lists the tree; after 2 s its folders' listings are kept (unchanged since).
    expect((await run(client, 'echo listed', { cwd: tree })).out).toBe('listed\n');
    await new Promise((resolve) => setTimeout(resolve, 2_200));
    const plant = [
      'mkdir crowd && (cd crowd && seq 3000 | xargs touch)',
      'mkdir -p deep/a/b/repo/.git',
      "printf '[core]\\n' > deep/a/b/repo/.git/config",
      'echo planted',
    ].join(' && ');
    expect((await run(client, plant, { cwd: tree })).out).toBe('planted\n');
    const attack = await run(
      client,
      "printf '[core]\\n\\tfsmonitor = touch /pwned\\n' >> deep/a/b/repo/.git/config; echo done",
      { cwd: tree },
    );
    expect(attack.out).toBe('done\n');
    expect(attack.err).toMatch(/Read-only file system/);
    expect(readFileSync(join(tree, 'deep', 'a', 'b', 'repo', '.git', 'config'), 'utf8')).toBe('[core]\n');
  });
});

describe('resource limits', () => {
  test('environment/info says which cgroups enforce them', async () => {
    const { client } = await serverAndClient();
    const info = await client.environmentInfo();
    expect(info.resourceLimits?.kind).toMatch(/^(cgroup1|cgroup2|none)$/);
    if (process.getuid?.() === 0 && info.resourceLimits?.kind !== 'none') {
      expect(info.resourceLimits?.controllers).toEqual(expect.arrayContaining(['pids', 'memory']));
      expect(info.resourceLimits?.summary).toMatch(/at most 1024 processes/);
    } else {
      expect(info.resourceLimits?.reason).toBeTruthy();
    }
  });

  test('a fork bomb stops at the default process limit, and the result says so', async () => {
    const { client } = await serverAndClient();
    const script = `perl -e 'my $f = 0; for (1..1200) { my $p = fork(); if (!defined $p) { $f++; next } if ($p == 0) { sleep 30; exit 0 } } print "failed=$f\\n"'`;
    const result = await run(client, script);
    expect(result.out).toMatch(/failed=[1-9]/);
    expect(result.err).toMatch(/execd: the command hit its process limit \(1024 processes/);
  });
});

describe('host secrets stay unreadable', () => {
  test("the server's auth token file reads as empty in every sandbox, even full access", async () => {
    const tokenFile = join(outside, 'token');
    writeFileSync(tokenFile, 'super-secret-token\n', { mode: 0o600 });
    const { client } = await serverAndClient({
      args: ['--auth-token-file', tokenFile],
      token: 'super-secret-token',
    });
    for (const sandbox of [
      { profile: 'read-only' },
      WORKSPACE_WRITE,
      { profile: 'danger-full-access', network: 'off' },
    ] as const) {
      const result = await run(client, `cat ${tokenFile}; echo "[end]"`, { sandbox });
      expect(result.out).toBe('[end]\n');
    }
    expect(readFileSync(tokenFile, 'utf8')).toBe('super-secret-token\n');
  });

  test.skipIf(process.getuid?.() !== 0)(
    'a read-only sandbox reads /etc/shadow as empty (root executor)',
    async () => {
      const { client } = await serverAndClient();
      const result = await run(client, 'wc -c < /etc/shadow', { sandbox: { profile: 'read-only' } });
      expect(result.exitCode).toBe(0);
      expect(result.out.trim()).toBe('0');
      expect(statSync('/etc/shadow').size).toBeGreaterThan(0);
    },
  );
});
