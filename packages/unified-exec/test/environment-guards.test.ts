// A local environment pins its writable roots when it is created, and runs sandboxed commands
// under resource limits whose hit the model reads in the result. Real bubblewrap, real attacks,
// checked from the host.
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { ForkServer } from '@execd/pty-utils';
import { waitFor } from '@execd/test-kit';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Environment, UnifiedExecProcessManager, UnifiedExecTools } from '../src/index.ts';

// Outside every workspace-write root (/tmp and $TMPDIR are writable there).
const OUTSIDE_PARENT = '/var/tmp';

describe.skipIf(process.platform !== 'linux' || process.getuid?.() !== 0)('local environment guards', () => {
  let base: string;
  beforeAll(async () => {
    base = await mkdtemp(join(OUTSIDE_PARENT, 'uexec-guards-'));
  });
  afterAll(async () => {
    await rm(base, { recursive: true, force: true });
  });

  async function tools(environment: Environment) {
    const manager = new UnifiedExecProcessManager({ approvalPolicy: 'never' });
    return { manager, tools: new UnifiedExecTools({ manager, environments: environment }) };
  }

  test('a root swapped for a symlink after the environment was created is refused', async () => {
    const repo = join(base, 'jobs', 'job-1', 'repo');
    const victim = join(base, 'victim');
    await mkdir(repo, { recursive: true });
    await mkdir(victim);
    await using environment = Environment.local({ cwd: repo, permissionProfile: 'workspace-write' });
    const { manager, tools: t } = await tools(environment);
    await using _ = manager;
    // What a command with the jobs folder writable can do between two commands (as $TMPDIR is):
    await rename(join(base, 'jobs', 'job-1'), join(base, 'jobs', 'job-1.old'));
    await mkdir(join(base, 'jobs', 'job-1'));
    await symlink(victim, repo);
    const result = await t.call(
      'exec_command',
      JSON.stringify({ cmd: 'echo pwned > pwned.txt', login: false }),
    );
    expect(result.text).toMatch(/now resolves to/);
    expect(await readdir(victim)).toEqual([]);
  });

  /** The bash waiters of prepared sandboxes in this process's tree (children of a bubblewrap). */
  function waiters(): number[] {
    const line = (pid: string) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'latin1').replaceAll('\0', ' ');
      } catch {
        return '';
      }
    };
    const parent = (pid: string) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
        return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]!;
      } catch {
        return '';
      }
    };
    return readdirSync('/proc')
      .filter((pid) => /^\d+$/.test(pid))
      .filter((pid) => line(pid).includes('execd-sandbox-waiter') && !/^\S*bwrap /.test(line(pid)))
      .filter((pid) => /^\S*bwrap /.test(line(parent(pid))))
      .map(Number);
  }

  test('prepareSandboxes: a repeating kind of command runs in a sandbox started ahead; close ends it', async () => {
    const ws = join(base, 'prepared');
    await mkdir(ws);
    // read-only: a writable /tmp's contents (other test files' workspaces, coming and going) are
    // part of every workspace-write plan and would make a command start cold now and then.
    const environment = Environment.local({
      cwd: ws,
      permissionProfile: 'read-only',
      prepareSandboxes: true,
    });
    try {
      const { manager, tools: t } = await tools(environment);
      await using _ = manager;
      for (const n of [1, 2]) {
        const result = await t.call('exec_command', JSON.stringify({ cmd: `echo run${n}`, login: false }));
        expect(result.text).toContain(`run${n}`);
      }
      await environment.preparedSandboxes!.settled();
      const [waiter] = waiters();
      expect(waiter).toBeDefined();
      const third = await t.call(
        'exec_command',
        JSON.stringify({ cmd: 'exec sleep 607', login: false, yield_time_ms: 250 }),
      );
      expect(third.text).toMatch(/Process running with session ID/);
      // The waiter became the command (`bash -c 'exec sleep 607'` then sleep).
      await waitFor(() => readFileSync(`/proc/${waiter}/cmdline`, 'latin1') === 'sleep\u0000607\u0000', {
        what: 'the waiter to become the command',
      });
    } finally {
      await environment.close();
    }
    expect(waiters()).toEqual([]);
  });

  test("forkServer: commands on pipes are the caller's fork server's children, sandboxed or not", async () => {
    const ws = join(base, 'forked');
    await mkdir(ws);
    const forkServer = await ForkServer.start();
    if (forkServer === undefined) throw new Error('no fork server here');
    try {
      for (const permissionProfile of ['danger-full-access', 'read-only'] as const) {
        await using environment = Environment.local({ cwd: ws, permissionProfile, forkServer });
        const { manager, tools: t } = await tools(environment);
        await using _ = manager;
        const before = forkServer.stats().started;
        // Outside a sandbox the command's parent is the helper; inside, bubblewrap (whose parent
        // the host sees as the helper) is the sandbox's pid 1, and the count says who started it.
        const result = await t.call(
          'exec_command',
          JSON.stringify({ cmd: 'echo "ppid=$PPID"', login: false }),
        );
        if (permissionProfile === 'danger-full-access') {
          expect(result.text).toContain(`ppid=${forkServer.helperPid}`);
        }
        expect(result.text).toMatch(/ppid=\d+/);
        expect(forkServer.stats().started).toBe(before + 1);
      }
    } finally {
      await forkServer.close();
    }
  });

  test('a command over its process limit says so in the tool result', async () => {
    const ws = join(base, 'limited');
    await mkdir(ws);
    await using environment = Environment.local({
      cwd: ws,
      permissionProfile: 'workspace-write',
      commandLimits: { maxProcesses: 40 },
    });
    const { manager, tools: t } = await tools(environment);
    await using _ = manager;
    const script = `perl -e 'my $f = 0; for (1..200) { my $p = fork(); if (!defined $p) { $f++; next } if ($p == 0) { sleep 20; exit 0 } } print "failed=$f\\n"'`;
    const result = await t.call(
      'exec_command',
      JSON.stringify({ cmd: script, login: false, yield_time_ms: 30_000 }),
    );
    expect(result.text).toMatch(/failed=[1-9]/);
    expect(result.text).toMatch(/execd: the command hit its process limit \(40 processes/);
  });
});
