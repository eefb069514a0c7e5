// Cache semantics: exactly one capture per key, failure fallback (exec_process.rs
// `shell_snapshot_v2_capture_failure_falls_back_to_original_command`), recovery, limits, close.

import { spawnSync } from 'node:child_process';
import { ExecError } from '@execd/protocol';
import { createEnv } from '@execd/pty-utils';
import { waitFor } from '@execd/test-kit';
import { describe, expect, test } from 'vitest';
import { restoreCommand, ShellSnapshotCache } from '../src/index.ts';
import { commandOf, launch, processesMatching, runPipe, tempHome } from './helpers/index.ts';

const HOUR_MS = 3_600_000;

describe('capture failure', () => {
  test('falls back to the original command, tries the profile once, recovers when it is fixed', async () => {
    using home = tempHome({ '.bashrc': 'printf x >> "$HOME/captures"\nexit 7\n' });
    await using cache = new ShellSnapshotCache({ createEnv, retryBackoffMs: HOUR_MS });
    const input = launch({ home, script: 'printf original' });
    for (let round = 0; round < 2; round++) {
      const prepared = await cache.prepare(input);
      expect(prepared).toMatchObject({ status: 'fallback', failure: { reason: 'nonZeroExit' } });
      expect(commandOf(prepared, 'fallback')).toBe(input.command);
      expect(await runPipe(input.command)).toEqual({ stdout: 'original', stderr: '', exitCode: 0 });
    }
    expect(home.captures()).toBe('x');

    // Editing the profile changes the key: the next launch captures at once, despite the backoff.
    home.write('.bashrc', 'printf x >> "$HOME/captures"\nrecovered() { printf recovered; }\n');
    const fixed = await cache.prepare(launch({ home, script: 'recovered' }));
    expect(fixed.status).toBe('restored');
    expect(await runPipe(commandOf(fixed))).toMatchObject({
      stdout: 'recovered',
    });
    expect(home.captures()).toBe('xx');
  });

  test('retries after the backoff when the cause was outside the rc files', async () => {
    using home = tempHome({
      '.bashrc':
        'printf x >> "$HOME/captures"\nif [ -e "$HOME/broken" ]; then exit 7; fi\nok() { printf ok; }\n',
      broken: '',
    });
    let clock = 0;
    await using cache = new ShellSnapshotCache({ createEnv, now: () => clock, retryBackoffMs: 1_000 });
    const input = launch({ home, script: 'ok' });
    expect((await cache.prepare(input)).status).toBe('fallback');
    spawnSync('rm', [`${home.path}/broken`]);
    expect((await cache.prepare(input)).status).toBe('fallback'); // still inside the backoff
    expect(home.captures()).toBe('x');
    clock += 1_000;
    const recovered = await cache.prepare(input);
    expect(recovered.status).toBe('restored');
    expect(await runPipe(commandOf(recovered))).toMatchObject({ stdout: 'ok' });
    expect(home.captures()).toBe('xx');
  });
});

test('many launches at once share exactly one capture', async () => {
  using home = tempHome({ '.bashrc': 'printf x >> "$HOME/captures"\nhelper() { printf helper; }\n' });
  await using cache = new ShellSnapshotCache({ createEnv });
  const results = await Promise.all(
    Array.from({ length: 8 }, () => cache.prepare(launch({ home, script: 'helper' }))),
  );
  expect(results.map((result) => result.status)).toEqual(Array(8).fill('restored'));
  expect(new Set(results.map((result) => JSON.stringify(result))).size).toBe(1);
  expect(home.captures()).toBe('x');
});

describe('limits and shutdown', () => {
  test('a capture over the timeout is killed with its whole process group', async () => {
    using home = tempHome({ '.bashrc': 'sleep 31.4159\n' });
    await using cache = new ShellSnapshotCache({ createEnv, timeoutMs: 300 });
    const prepared = await cache.prepare(launch({ home, script: 'true' }));
    expect(prepared).toMatchObject({ status: 'fallback', failure: { reason: 'timeout' } });
    await waitFor(() => processesMatching('sleep 31.4159').length === 0);
  });

  test('output over the cap is a failure', async () => {
    using home = tempHome({ '.bashrc': `big() { : '${'y'.repeat(100_000)}'; }\n` });
    await using cache = new ShellSnapshotCache({ createEnv, maxOutputBytes: 64 * 1024 });
    const prepared = await cache.prepare(launch({ home, script: 'true' }));
    expect(prepared).toMatchObject({ status: 'fallback', failure: { reason: 'tooLarge' } });
  });

  test('close() kills a running capture and its waiters fall back', async () => {
    using home = tempHome({ '.bashrc': 'sleep 31.2718\n' });
    const cache = new ShellSnapshotCache({ createEnv });
    const pending = cache.prepare(launch({ home, script: 'true' }));
    await waitFor(() => processesMatching('sleep 31.2718').length > 0);
    await cache.close();
    await cache.close(); // idempotent
    expect(await pending).toMatchObject({ status: 'fallback', failure: { reason: 'aborted' } });
    // SIGKILL went to the whole group; the grandchild may take a moment to be gone.
    await waitFor(() => processesMatching('sleep 31.2718').length === 0);
    expect(await cache.prepare(launch({ home, script: 'true' }))).toMatchObject({ status: 'fallback' });
  });

  test('a cancelled waiter stops waiting; the capture goes on for the others', async () => {
    using home = tempHome({
      '.bashrc': 'while [ ! -e "$HOME/go" ]; do sleep 0.02; done\nhelper() { printf helper; }\n',
    });
    await using cache = new ShellSnapshotCache({ createEnv });
    const controller = new AbortController();
    const cancelled = cache.prepare({
      ...launch({ home, script: 'helper' }),
      cancelSignal: controller.signal,
    });
    const patient = cache.prepare(launch({ home, script: 'helper' }));
    controller.abort();
    await expect(cancelled).rejects.toSatisfy(
      (error: unknown) => ExecError.is(error) && error.code === 'aborted',
    );
    home.write('go', '');
    expect((await patient).status).toBe('restored');
  });

  test('least recently used snapshots are evicted beyond maxEntries', async () => {
    using home = tempHome({ '.bashrc': 'printf x >> "$HOME/captures"\n' });
    await using cache = new ShellSnapshotCache({ createEnv, maxEntries: 2 });
    for (const scopeId of ['a', 'b', 'a', 'c', 'a']) {
      expect((await cache.prepare(launch({ home, script: 'true', scopeId }))).status).toBe('restored');
    }
    expect(cache.size).toBe(2);
    expect(home.captures()).toBe('xxx'); // a, b, c; `a` stayed recent, so it was never recaptured
  });
});

describe('pass-through outcomes', () => {
  test('no request, a non-login argv, or an invalid request', async () => {
    using home = tempHome();
    await using cache = new ShellSnapshotCache({ createEnv });
    const base = launch({ home, script: 'true' });
    expect(await cache.prepare({ ...base, request: undefined })).toEqual({
      status: 'notRequested',
      command: base.command,
    });
    const plain = { ...base.command, argv: ['/bin/bash', '-c', 'true'] };
    expect(await cache.prepare({ ...base, argv: plain.argv, command: plain })).toEqual({
      status: 'skipped',
      command: plain,
    });
    const fish = await cache.prepare({
      ...base,
      request: { scopeId: 's', shell: { name: 'fish', path: '/bin/bash' } },
    });
    expect(fish.status === 'invalid' && fish.error.code).toBe('invalidParams');
    expect(home.listing()).toEqual([]);
  });
});

test('a state that fails to evaluate reports it on stderr and the command still runs', async () => {
  using home = tempHome();
  const restored = restoreCommand(
    { shell: 'bash', state: '# Snapshot file\nbroken ( {\n', env: {} },
    { command: launch({ home, script: 'printf ran' }).command, shellStart: 0, requestEnv: {} },
  );
  const output = await runPipe(restored);
  expect(output.stdout).toBe('ran');
  expect(output.stderr).toContain('failed to restore shell snapshot\n');
  expect(output.exitCode).toBe(0);
});

const bwrapUsable = spawnSync('bwrap', ['--ro-bind', '/', '/', '--dev', '/dev', 'true']).status === 0;

test.skipIf(!bwrapUsable)('a sandbox-wrapped launch is captured inside the same wrapper', async () => {
  using home = tempHome({
    '.bashrc': `printf x >> "$HOME/captures"\nexport SEEN_SANDBOX="\${INSIDE_SANDBOX-no}"\n`,
  });
  await using cache = new ShellSnapshotCache({ createEnv });
  const input = launch({ home, script: 'printf "%s|%s" "$SEEN_SANDBOX" "$INSIDE_SANDBOX"' });
  const wrapper = [
    'bwrap',
    '--ro-bind',
    '/',
    '/',
    '--bind',
    home.path,
    home.path,
    '--dev',
    '/dev',
    '--proc',
    '/proc',
  ];
  const wrapped = [
    ...wrapper,
    '--unshare-pid',
    '--die-with-parent',
    '--setenv',
    'INSIDE_SANDBOX',
    'yes',
    '--',
  ];
  const prepared = await cache.prepare({
    ...input,
    sandbox: { profile: 'read-only' },
    command: { ...input.command, argv: [...wrapped, ...input.argv] },
  });
  expect(prepared.status).toBe('restored');
  const command = commandOf(prepared);
  expect(command.argv.slice(0, wrapped.length)).toEqual(wrapped);
  expect(command.argv[wrapped.length + 1]).toBe('-pc');
  expect(await runPipe(command)).toEqual({ stdout: 'yes|yes', stderr: '', exitCode: 0 });
  expect(home.captures()).toBe('x');
});
