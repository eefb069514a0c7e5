// A host like the container image's (`node:*-slim`): no python3, and of perl only perl-base (its
// modules, no others). `execd-server` runs in a mount namespace where the python3 a trusted lookup
// would find is not executable and every perl module folder but perl-base's is empty. Checked from
// outside: the fork server is the perl helper, commands on pipes start from it, a terminal falls
// back to the server's own PTY spawn, ^C and terminate reach the whole tree, and a sandboxed
// command (prepared sandboxes on, so the perl waiter runs too) stays confined.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readlinkSync, realpathSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ExecServerClient } from '@execd/exec-client';
import { cmdline, descendants, pidsMatching, procStat, uniqueMarker, waitFor } from '@execd/test-kit';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CliServer } from './helpers/cli-server.ts';
import { CONFINED_SANDBOX, collect, execParams } from './helpers/exec.ts';

/** Where the executor looks for python3 (`TRUSTED_SYSTEM_DIRS`, then the root-only folders). */
const PYTHON_DIRS = ['/usr/sbin', '/usr/bin', '/sbin', '/bin', '/usr/local/sbin', '/usr/local/bin'];

/** The real files of every python3 the executor could trust here. */
function pythonFiles(): string[] {
  const files = new Set<string>();
  for (const dir of PYTHON_DIRS) {
    const path = join(dir, 'python3');
    if (existsSync(path)) files.add(realpathSync(path));
  }
  return [...files];
}

/** perl's module folders other than perl-base's (none when this perl has no perl-base). */
function perlModuleDirs(): string[] {
  const inc = execFileSync('perl', ['-e', 'print join("\\n", @INC)'], { encoding: 'utf8' }).split('\n');
  if (!inc.some((dir) => dir.includes('perl-base'))) return [];
  const hidden: string[] = [];
  for (const dir of inc.filter((d) => d !== '' && !d.includes('perl-base') && existsSync(d)).sort()) {
    if (!hidden.some((parent) => dir.startsWith(`${parent}/`))) hidden.push(dir);
  }
  return hidden;
}

/** What the namespace hides, looked up once. */
const HIDDEN_PYTHON = pythonFiles();
const HIDDEN_PERL_DIRS = perlModuleDirs();

/** `unshare` with a private mount namespace, then the mounts, then exec of the server. */
function slimWrapper(): string[] {
  const mounts = [
    ...HIDDEN_PYTHON.map((file) => `mount --bind /dev/null '${file}'`),
    ...HIDDEN_PERL_DIRS.map((dir) => `mount -t tmpfs -o ro,size=4k none '${dir}'`),
  ];
  const namespace = process.getuid?.() === 0 ? ['-m'] : ['-r', '-m'];
  return [
    'unshare',
    ...namespace,
    '--propagation',
    'private',
    'sh',
    '-c',
    `set -e; ${mounts.join('; ')}; exec "$@"`,
    'sh',
  ];
}

/** Whether this machine lets the test make a mount namespace (root, or user namespaces). */
function canUnshare(): boolean {
  const [program, ...args] = slimWrapper();
  return spawnSync(program!, [...args, 'true'], { stdio: 'ignore' }).status === 0;
}

const exe = (pid: number): string => {
  try {
    return readlinkSync(`/proc/${pid}/exe`);
  } catch {
    return '';
  }
};

const usable = canUnshare();
let server: CliServer;
let client: ExecServerClient;
let workspace: string;

describe.runIf(usable)('execd-server on a host without python3 and with perl-base only', () => {
  beforeAll(async () => {
    workspace = realpathSync(mkdtempSync(join('/var/tmp', 'execd-slim-')));
    server = await CliServer.start({ args: ['--prepare-sandboxes'], wrapper: slimWrapper() });
    client = await ExecServerClient.connect({ url: server.url });
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await server?.kill('SIGTERM');
    rmSync(workspace, { recursive: true, force: true });
  });

  test('the namespace really hides python3 and the modules beyond perl-base', async () => {
    const script =
      'for p in "$@"; do "$p" -c 1 2>/dev/null && echo "ran $p"; done; ' +
      'perl -MData::Dumper -e 1 2>/dev/null && echo dumper; perl -MPOSIX -e 1 && echo posix';
    const probe = await collect(
      await client.start(
        execParams({ processId: 'probe', argv: ['sh', '-c', script, 'sh', ...HIDDEN_PYTHON] }),
      ),
    );
    const text = probe.stdout.toString();
    expect(text).not.toContain('ran ');
    if (HIDDEN_PERL_DIRS.length > 0) expect(text).toBe('posix\n');
    else expect(text).toMatch(/posix\n$/);
  });

  test('the fork server is the perl helper, and commands on pipes start from it', async () => {
    const helpers = descendants(server.pid).filter(
      (stat) => stat.ppid === server.pid && /\/perl$/.test(exe(stat.pid)),
    );
    expect(helpers).toHaveLength(1);
    expect(descendants(server.pid).filter((stat) => /python/.test(exe(stat.pid)))).toEqual([]);
    const run = await collect(
      await client.start(
        execParams({ processId: 'pipes', argv: ['sh', '-c', 'echo "parent $PPID"; echo err >&2; exit 3'] }),
      ),
    );
    expect(run).toMatchObject({ exitCode: 3, closed: true });
    expect(run.stdout.toString()).toBe(`parent ${helpers[0]!.pid}\n`);
    expect(run.stderr.toString()).toBe('err\n');
  });

  test('a terminal works through the server itself: input, echo, ^C to the foreground job', async () => {
    const marker = uniqueMarker('slim-pty');
    const proc = await client.start(
      execParams({
        processId: 'pty',
        argv: [
          'bash',
          '-c',
          `echo "parent $PPID"; tty; IFS= read -r line; echo "got $line"; sleep 300 # ${marker}`,
        ],
        tty: true,
        pipeStdin: true,
      }),
    );
    const done = collect(proc);
    await waitFor(() => pidsMatching(marker).some((pid) => cmdline(pid).startsWith('bash')), {
      what: 'the terminal command to run',
    });
    await proc.write(Buffer.from('typed\r'));
    await waitFor(() => descendants(server.pid).some((stat) => cmdline(stat.pid) === 'sleep 300'), {
      what: 'the command to read its line and sleep',
    });
    await proc.write(Buffer.from('\x03'));
    const ran = await done;
    const text = ran.pty.toString();
    expect(text).toContain(`parent ${server.pid}\r\n`);
    expect(text).toMatch(/\/dev\/pts\/\d+\r\n/);
    // Typed ahead or not, the terminal echoes the line and bash reads it.
    expect(text).toContain('typed\r\n');
    expect(text.slice(text.search(/\/dev\/pts\/\d+\r\n/))).toContain('got typed\r\n');
    expect(ran.closed).toBe(true);
    expect(ran.exitCode).not.toBe(0);
    expect(pidsMatching(marker)).toEqual([]);
  });

  test('terminate ends the whole tree of a command started by the perl helper', async () => {
    const marker = uniqueMarker('slim-tree');
    const proc = await client.start(
      execParams({ processId: 'tree', argv: ['sh', '-c', `sleep 301 & sleep 302 & wait # ${marker}`] }),
    );
    const done = collect(proc);
    await waitFor(
      () => descendants(server.pid).filter((stat) => /^sleep 30[12]$/.test(cmdline(stat.pid))).length === 2,
      {
        what: 'both sleeps to run',
      },
    );
    const sleeps = descendants(server.pid).filter((stat) => /^sleep 30[12]$/.test(cmdline(stat.pid)));
    await proc.terminate();
    expect((await done).closed).toBe(true);
    await waitFor(() => sleeps.every((stat) => procStat(stat.pid) === undefined), {
      what: 'the sleeps to be gone',
    });
  });

  test('a sandboxed command, cold and then in a prepared sandbox (the perl waiter), stays confined', async () => {
    const outside = join(homedir(), `execd-slim-escape-${process.pid}`);
    const start = (processId: string, argv: string[]) =>
      client.start(execParams({ processId, argv, cwd: workspace, sandbox: CONFINED_SANDBOX }));
    const attack = ['sh', '-c', `echo "$PWD"; touch '${outside}' && echo wrote; echo inside > in-workspace`];
    try {
      for (const id of ['cold-1', 'cold-2']) {
        const ran = await collect(await start(id, attack));
        expect(ran.stdout.toString()).toBe(`${workspace}\n`);
        expect(existsSync(outside)).toBe(false);
      }
      // A kind of command that repeats gets a sandbox started ahead: its waiter is perl.
      const waiter = await waitFor(
        () =>
          descendants(server.pid).find(
            (stat) => cmdline(stat.pid).startsWith('execd-sandbox-waiter') && /\/perl$/.test(exe(stat.pid)),
          ),
        { what: 'a perl waiter in a prepared sandbox' },
      );
      const prepared = await start('prepared', attack);
      const ran = await collect(prepared);
      expect(ran.stdout.toString()).toBe(`${workspace}\n`);
      expect(ran.exitCode).toBe(0);
      expect(existsSync(outside)).toBe(false);
      expect(existsSync(join(workspace, 'in-workspace'))).toBe(true);
      expect(procStat(waiter.pid)).toBeUndefined();
      const metrics = await (await fetch(`${server.httpUrl}/metrics`)).text();
      expect(metrics).toContain('execd_prepared_sandbox_commands_total{start="prepared"} 1');
    } finally {
      rmSync(outside, { force: true });
    }
  });
});
