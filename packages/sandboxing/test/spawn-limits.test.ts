// spawnProcess puts every bubblewrap-sandboxed command under its resource limits: attacks from
// inside the sandbox (a fork bomb, a memory hog, a huge file, a daemon left behind), checked from
// the host, and the result says which limit was hit.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '@execd/test-kit';
import { describe, expect, test } from 'vitest';
import {
  DEFAULT_COMMAND_LIMITS,
  detectResourceControl,
  sandboxFromContext,
  spawnProcess,
} from '../src/index.ts';
import { childEnv, sleepMarker, sleepPids, tempDir } from './helpers/index.ts';

const MIB = 1024 * 1024;
const control = await detectResourceControl();
const hasCgroups = process.getuid?.() === 0 && control.kind !== 'none';

async function runLimited(
  script: string,
  cwd: string,
  limits?: Parameters<typeof spawnProcess>[0]['limits'],
) {
  const launched = await spawnProcess({
    command: ['/bin/bash', '-c', script],
    cwd,
    env: childEnv(),
    sandbox: sandboxFromContext({ profile: 'workspace-write' }, cwd, { env: {} }),
    tty: false,
    stdinOpen: false,
    ...(limits === undefined ? {} : { limits }),
  });
  let output = '';
  for await (const chunk of launched.process.output()) output += Buffer.from(chunk.bytes).toString();
  const exit = await launched.process.closed;
  return { launched, output, exit };
}

describe.skipIf(!hasCgroups)('resource limits under bubblewrap', () => {
  test('the defaults are in force for a sandboxed command', async () => {
    using ws = tempDir();
    const { launched } = await runLimited('true', ws.path);
    expect(launched.limits?.inForce).toEqual(DEFAULT_COMMAND_LIMITS);
    expect(await launched.limits?.describeHit()).toBeUndefined();
  });

  test('a fork bomb stops at the process limit; nothing it started survives; the hit is reported', async () => {
    using ws = tempDir();
    const marker = sleepMarker();
    // perl's fork fails at once with EAGAIN (bash would retry for half a minute).
    const script = `perl -e 'my $f = 0; for (1..300) { my $p = fork(); if (!defined $p) { $f++; next } if ($p == 0) { exec "sleep", "${marker}" } } print "started, $f forks failed\\n"'`;
    const { launched, output, exit } = await runLimited(script, ws.path, { maxProcesses: 40 });
    expect({ output, exit }).toMatchObject({
      output: expect.stringMatching(/started, [1-9]\d* forks failed/),
    });
    expect(await launched.limits?.describeHit()).toMatch(/process limit \(40/);
    await waitFor(() => sleepPids(marker).length === 0, { what: 'every sleeper to be gone' });
  });

  test('a memory hog is killed at the memory limit and the hit is reported', async () => {
    using ws = tempDir();
    const hog = `node -e 'const a=[]; for(;;){ a.push(Buffer.alloc(16*1024*1024, 1)); }'`;
    const { launched, exit } = await runLimited(hog, ws.path, { maxMemoryBytes: 96 * MIB });
    expect(exit.exitCode).not.toBe(0);
    expect(await launched.limits?.describeHit()).toMatch(/memory limit \(96 MiB\)/);
  });

  test('a file cannot grow past the file-size limit', async () => {
    using ws = tempDir();
    const { output } = await runLimited('head -c 3M /dev/zero > big; echo "rc=$?"', ws.path, {
      maxFileBytes: MIB,
    });
    expect(output).toMatch(/rc=[1-9]/);
    expect(statSync(join(ws.path, 'big')).size).toBe(MIB);
  });

  test('limits: false runs the command without limits (no rlimit; its cgroup only contains it)', async () => {
    using ws = tempDir();
    const { launched, output } = await runLimited('ulimit -f', ws.path, false);
    expect(launched.limits).toBeUndefined();
    expect(output.trim()).toBe('unlimited');
  });

  // A bubblewrap command's group is made while its plan looks at the disk (spawn.ts `launch`).
  /**
   * This process's command groups that exist now, in every hierarchy in use (a group's name holds
   * its executor's pid: other test files, running beside this one, make and remove their own).
   */
  const groups = (): string[] => {
    const parents =
      control.kind === 'cgroup1'
        ? Object.values(control.parent)
        : control.kind === 'cgroup2'
          ? [control.parent]
          : [];
    return parents.flatMap((dir) =>
      readdirSync(dir!, { withFileTypes: true })
        .filter((entry) => entry.isDirectory() && entry.name.split('.')[1] === String(process.pid))
        .map((entry) => `${dir}/${entry.name}`),
    );
  };

  test('a launch its plan refuses leaves no group behind, though the group was made meanwhile', async () => {
    using ws = tempDir();
    const before = groups();
    // The listing sees this process's groups: a running command's is there.
    const running = await spawnProcess({
      command: ['/bin/sleep', '30'],
      cwd: ws.path,
      env: childEnv(),
      sandbox: sandboxFromContext({ profile: 'workspace-write' }, ws.path, { env: {} }),
      tty: false,
      stdinOpen: false,
    });
    // One directory per hierarchy in use (v1: pids, memory, cpuacct).
    expect(groups().length).toBeGreaterThan(before.length);
    await running.process.close();
    await waitFor(() => groups().length === before.length, {
      what: 'the running command to remove its group',
    });
    const error = await spawnProcess({
      command: ['no-such-program-execd'],
      cwd: ws.path,
      env: childEnv(),
      sandbox: sandboxFromContext({ profile: 'workspace-write' }, ws.path, { env: {} }),
      tty: false,
      stdinOpen: false,
    }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'spawnFailed' });
    await waitFor(() => groups().length === before.length, {
      what: 'the refused launch to remove its group',
    });
    expect(groups().sort()).toEqual(before.sort());
  });

  test('a group that cannot be made fails the launch and holds no placeholder', async () => {
    using ws = tempDir();
    const unusable =
      control.kind === 'cgroup1'
        ? {
            ...control,
            parent: Object.fromEntries(control.controllers.map((c) => [c, '/etc/hostname/execd'])),
          }
        : { ...control, parent: '/etc/hostname/execd' };
    const sandbox = sandboxFromContext({ profile: 'workspace-write' }, ws.path, { env: {} });
    const error = await spawnProcess({
      command: ['/bin/true'],
      cwd: ws.path,
      env: childEnv(),
      sandbox,
      tty: false,
      stdinOpen: false,
      resourceControl: unusable as typeof control,
    }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'unsupported', message: expect.stringMatching(/cgroup/) });
    // Nothing of that plan is held: the next command's placeholders (the workspace has no
    // `.git`, `.agents`, `.codex`) are removed when it ends, leaving the workspace empty.
    const { exit } = await runLimited('true', ws.path);
    expect(exit.exitCode).toBe(0);
    await waitFor(() => readdirSync(ws.path).length === 0, { what: 'the placeholders to be removed' });
    expect(readdirSync(ws.path)).toEqual([]);
  });
});
