// A local environment pins its writable roots when it is created, and runs sandboxed commands
// under resource limits whose hit the model reads in the result. Real bubblewrap, real attacks,
// checked from the host.
import { mkdir, mkdtemp, readdir, rename, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
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
